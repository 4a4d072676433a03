import {useMemo, useState} from "react";
import type {ModelTensor} from "../../../../../../electron/contract/ipc";
import {formatBytes} from "../../../../format/format";
import "./TensorTable.css";

type Column = "name" | "layer" | "role" | "type" | "elements" | "bytes";
const MAX_ROWS = 400;

function elements(tensor: ModelTensor): number {
    return tensor.shape.reduce((product, dim) => product * dim, 1);
}

function sortValue(tensor: ModelTensor, column: Column): string | number {
    switch (column) {
        case "name": return tensor.name;
        case "layer": return tensor.layer ?? -1;
        case "role": return tensor.role;
        case "type": return tensor.type;
        case "elements": return elements(tensor);
        case "bytes": return tensor.bytes;
    }
}

/** Every tensor of the model, filterable by name/role/type and sortable by any column. */
export function TensorTable({tensors}: {tensors: ModelTensor[]}) {
    const [filter, setFilter] = useState("");
    const [sort, setSort] = useState<{column: Column; descending: boolean}>({column: "bytes", descending: true});
    const rows = useMemo(() => {
        const needle = filter.trim().toLowerCase();
        const matching = needle === "" ? tensors : tensors.filter((tensor) =>
            tensor.name.toLowerCase().includes(needle) || tensor.role.toLowerCase().includes(needle) || tensor.type.toLowerCase() === needle);
        return [...matching].sort((a, b) => {
            const left = sortValue(a, sort.column);
            const right = sortValue(b, sort.column);
            const order = typeof left === "number" && typeof right === "number" ? left - right : String(left).localeCompare(String(right), undefined, {numeric: true});
            return sort.descending ? -order : order;
        });
    }, [tensors, filter, sort]);
    // the whole cell is the sort control (a button filling it), and the cell tells assistive technology how it sorts
    const header = (column: Column, label: string, numeric = false) => (
        <th className={`sortable ${numeric ? "num" : ""}`} aria-sort={sort.column !== column ? "none" : sort.descending ? "descending" : "ascending"}>
            <button type="button" className={`sort ${sort.column === column ? "active" : ""}`} data-testid={`sort-${column}`}
                onClick={() => setSort({column, descending: sort.column === column ? !sort.descending : numeric})}>
                {label}<span aria-hidden="true">{sort.column === column ? (sort.descending ? " ↓" : " ↑") : ""}</span>
            </button>
        </th>
    );
    return (
        <section className="panel tensor-table">
            <div className="tensor-table-head">
                <h2>Tensors <span className="faint">{rows.length === tensors.length ? tensors.length : `${rows.length} of ${tensors.length}`}</span></h2>
                <input className="input" data-testid="tensor-filter" placeholder="Filter by name, role or type (e.g. ffn, attn_q, Q4_K)" value={filter}
                    onChange={(event) => setFilter(event.target.value)}/>
            </div>
            <div className="tensor-table-scroll">
                <table className="data" data-testid="tensor-table">
                    <thead>
                        <tr>{header("name", "Name")}{header("layer", "Layer", true)}{header("role", "Role")}{header("type", "Type")}
                            <th>Shape</th>{header("elements", "Elements", true)}{header("bytes", "Size", true)}</tr>
                    </thead>
                    <tbody>
                        {rows.slice(0, MAX_ROWS).map((tensor) => (
                            <tr key={tensor.name} data-testid="tensor-row">
                                <td className="mono">{tensor.name}</td>
                                <td className="num">{tensor.layer ?? "—"}</td>
                                <td>{tensor.role}</td>
                                <td className="mono">{tensor.type}</td>
                                <td className="mono faint">{tensor.shape.join(" × ")}</td>
                                <td className="num">{elements(tensor).toLocaleString()}</td>
                                <td className="num">{formatBytes(tensor.bytes)}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
                {rows.length > MAX_ROWS && <div className="faint tensor-table-more">{rows.length - MAX_ROWS} more rows: narrow the filter to see them.</div>}
            </div>
        </section>
    );
}
