/**
 * Summaries of a placement for the UI: bytes and tensor counts per buffer type, and a layer × role grid (the
 * placement map: rows = layers, columns = roles, cell = buffer type).
 */
import type { Placement, PlacementTensor } from "./Placement.js";
import { llamaCppNaturalBufferType, plannedBufferType, type NaturalBufferType } from "./verifyOverrides.js";

/** Totals for one buffer type. */
export interface BufferTypeTotals {
    readonly bufferType: string;
    readonly bytes: number;
    readonly tensors: number;
}

/** One cell of the placement map: every tensor of one role in one layer (usually one weight, maybe a bias). */
export interface PlacementCell {
    /** The buffer type holding most of the cell's bytes (ties: alphabetical). */
    readonly bufferType: string;
    /** True when the cell's tensors are split over more than one buffer type. */
    readonly mixed: boolean;
    readonly bytes: number;
    readonly tensors: number;
}

/** One row of the placement map. */
export interface PlacementRow {
    readonly layer: number;
    /** One entry per {@link PlacementSummary.roles} entry; `null` where the layer has no tensor of that role. */
    readonly cells: readonly (PlacementCell | null)[];
    /** Bytes of this layer per buffer type, sorted like {@link PlacementSummary.byBufferType}. */
    readonly byBufferType: readonly BufferTypeTotals[];
}

/** A tensor outside the repeating layers (`token_embd.weight`, `output.weight`, …). */
export interface PlacedGlobalTensor {
    readonly name: string;
    readonly role: string;
    readonly bufferType: string;
    readonly bytes: number;
}

/** What a placement puts where. */
export interface PlacementSummary {
    readonly totalBytes: number;
    readonly totalTensors: number;
    /** Per buffer type, most bytes first (ties: alphabetical). */
    readonly byBufferType: readonly BufferTypeTotals[];
    /** Tensors the placement moves away from where llama.cpp would put them (each needs an override). */
    readonly movedTensors: number;
    readonly movedBytes: number;
    /** Columns of the map: roles of layer tensors, in order of first appearance in the tensor table. */
    readonly roles: readonly string[];
    /** Rows of the map, by ascending layer. */
    readonly rows: readonly PlacementRow[];
    /** Tensors outside the layers, in table order. */
    readonly globals: readonly PlacedGlobalTensor[];
}

/** Options for {@link summarisePlacement}. */
export interface SummarisePlacementOptions {
    /** Where unlisted tensors go. Defaults to `llamaCppNaturalBufferType(placement.defaultBufferType)`. */
    readonly natural?: NaturalBufferType;
}

class Totals {
    private readonly entries = new Map<string, { bytes: number; tensors: number }>();

    add(bufferType: string, bytes: number): void {
        const entry = this.entries.get(bufferType) ?? { bytes: 0, tensors: 0 };
        entry.bytes += bytes;
        entry.tensors += 1;
        this.entries.set(bufferType, entry);
    }

    sorted(): BufferTypeTotals[] {
        return [...this.entries]
            .map(([bufferType, { bytes, tensors }]) => ({ bufferType, bytes, tensors }))
            .sort((a, b) => b.bytes - a.bytes || (a.bufferType < b.bufferType ? -1 : a.bufferType > b.bufferType ? 1 : 0));
    }
}

function toCell(totals: Totals): PlacementCell {
    const entries = totals.sorted();
    const top = entries[0] as BufferTypeTotals;
    const sum = (key: "bytes" | "tensors"): number => entries.reduce((s, e) => s + e[key], 0);
    return { bufferType: top.bufferType, mixed: entries.length > 1, bytes: sum("bytes"), tensors: sum("tensors") };
}

/**
 * Summarises a placement over a model's tensor table: bytes per buffer type, the layer × role map and the tensors
 * outside the layers. Unlisted tensors count where llama.cpp would put them.
 */
export function summarisePlacement(
    placement: Placement,
    tensors: readonly PlacementTensor[],
    options: SummarisePlacementOptions = {}
): PlacementSummary {
    const natural = options.natural ?? llamaCppNaturalBufferType(placement.defaultBufferType);
    const overall = new Totals();
    const roles: string[] = [];
    const layers = new Map<number, { totals: Totals; cells: Map<string, Totals> }>();
    const globals: PlacedGlobalTensor[] = [];
    let movedTensors = 0;
    let movedBytes = 0;

    for (const tensor of tensors) {
        const bufferType = plannedBufferType(placement, tensor.name, natural);
        overall.add(bufferType, tensor.bytes);
        if (bufferType !== natural(tensor.name)) {
            movedTensors++;
            movedBytes += tensor.bytes;
        }
        if (tensor.layer === null) {
            globals.push({ name: tensor.name, role: tensor.role, bufferType, bytes: tensor.bytes });
            continue;
        }
        if (!roles.includes(tensor.role)) roles.push(tensor.role);
        const row = layers.get(tensor.layer) ?? { totals: new Totals(), cells: new Map<string, Totals>() };
        row.totals.add(bufferType, tensor.bytes);
        const cell = row.cells.get(tensor.role) ?? new Totals();
        cell.add(bufferType, tensor.bytes);
        row.cells.set(tensor.role, cell);
        layers.set(tensor.layer, row);
    }

    const byBufferType = overall.sorted();
    const rank = new Map(byBufferType.map((entry, i) => [entry.bufferType, i]));
    const rows = [...layers]
        .sort((a, b) => a[0] - b[0])
        .map(([layer, row]) => ({
            layer,
            cells: roles.map((role) => {
                const cell = row.cells.get(role);
                return cell ? toCell(cell) : null;
            }),
            byBufferType: row.totals.sorted().sort((a, b) => (rank.get(a.bufferType) ?? 0) - (rank.get(b.bufferType) ?? 0))
        }));
    return {
        totalBytes: byBufferType.reduce((sum, entry) => sum + entry.bytes, 0),
        totalTensors: tensors.length,
        byBufferType,
        movedTensors,
        movedBytes,
        roles,
        rows,
        globals
    };
}
