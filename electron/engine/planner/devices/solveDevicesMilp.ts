/**
 * The K-device placement MILP (HiGHS): each weight op on exactly one device, each device within its memory, minimising
 * one workload request (TTFT + (genTokens − 1) × TPOT) as priceDevicePlan.ts prices it. The formulation follows claim 3
 * of the patent "Computation task allocation system for distributed inference of large language models": binary
 * x_ij (sub-model i on device j), T_compute = Σ ε_ij x_ij, T_data = Σ (L_ij + t_ij) over the links used, and the
 * memory constraint Σ_i M_i x_ij ≤ β M_j per device; here the sub-models are weight tensors, ε_ij is the op's measured
 * prefill + decode time on device j (costModel.ts), and the links are priced per switch along llama.cpp's execution
 * order (hopUs).
 */
import type {DeviceCostTable} from "./deviceCostTable.js";
import {edgeUs} from "./priceDevicePlan.js";
import {solveMilp} from "../strategies/solveMilp.js";

const num = (v: number): string => (Number.isFinite(v) ? v : 0).toPrecision(15).replace(/\.?0+(e|$)/, "$1");

/** Coefficients this small are dropped (sub-nanosecond): they only make the LP text longer. */
const NEGLIGIBLE_US = 1e-9;

/**
 * Solves the plan for `table`. Returns the op → device assignment and the objective (µs, without the terms no choice
 * changes), or `null` when no assignment fits every device.
 */
export async function solveDevicesMilp(table: DeviceCostTable): Promise<{assignment: Map<string, number>; objectiveUs: number} | null> {
    const {nodes, devices, genTokens} = table;
    const K = devices.length;
    // x_i_d: op node i on device d (only devices that can run it)
    const x = (i: number, d: number): string => `x${i}_${d}`;
    const allowed = new Map<number, number[]>();
    nodes.forEach((node, i) => {
        if (node.kind !== "op") return;
        const usable = Array.from({length: K}, (_, d) => d).filter((d) => Number.isFinite(node.prefillUs[d]!) && Number.isFinite(node.decodeUs[d]!));
        allowed.set(i, usable);
    });
    if ([...allowed.values()].some((usable) => usable.length === 0)) return null;

    const objective = new Map<string, number>();
    const add = (name: string, us: number): void => {
        objective.set(name, (objective.get(name) ?? 0) + us);
    };
    const constraints: string[] = [];
    const continuous: string[] = [];
    // T_compute: the op's prompt cost plus (genTokens − 1) decode steps where its weight is
    for (const [i, usable] of allowed) {
        const node = nodes[i]!;
        if (node.kind !== "op") continue;
        for (const d of usable) add(x(i, d), node.prefillUs[d]! + (genTokens - 1) * node.decodeUs[d]!);
        constraints.push(` one${i}: ${usable.map((d) => `+ ${x(i, d)}`).join(" ")} = 1`);
    }
    // T_data: every switch between consecutive nodes, priced per link. A fixed neighbour makes the term linear in x;
    // two op neighbours need y_i_d_e ≥ x_i_d + x_{i+1}_e − 1 (minimisation drives y to the product).
    let pairs = 0;
    for (let i = 0; i + 1 < nodes.length; i++) {
        const a = nodes[i]!, b = nodes[i + 1]!;
        const da = a.kind === "op" ? allowed.get(i)! : [a.device];
        const db = b.kind === "op" ? allowed.get(i + 1)! : [b.device];
        for (const d of da) {
            for (const e of db) {
                const us = edgeUs(table, a, d, b, e);
                if (us <= NEGLIGIBLE_US) continue;
                if (a.kind === "op" && b.kind === "op") {
                    const y = `y${pairs++}`;
                    continuous.push(y);
                    add(y, us);
                    constraints.push(` l${y}: ${y} - ${x(i, d)} - ${x(i + 1, e)} >= -1`);
                } else if (a.kind === "op") add(x(i, d), us);
                else if (b.kind === "op") add(x(i + 1, e), us);
            }
        }
    }
    // memory: weights on each device within its capacity less what it holds anyway (KV, scratch)
    for (let d = 0; d < K; d++) {
        const room = devices[d]!.capacityBytes - table.reservedBytes[d]!;
        const terms = [...allowed].filter(([, usable]) => usable.includes(d)).map(([i]) => {
            const node = nodes[i]!;
            return node.kind === "op" && node.bytes > 0 ? `+ ${node.bytes} ${x(i, d)}` : "";
        }).filter((term) => term !== "");
        if (room < 0) return null;
        if (terms.length > 0) constraints.push(` mem${d}: ${terms.join(" ")} <= ${num(room)}`);
    }
    const binaries = [...allowed].flatMap(([i, usable]) => usable.map((d) => x(i, d)));
    const objectiveText = [...objective].map(([name, us]) => `+ ${num(us)} ${name}`).join(" ");
    const lp = ["Minimize", ` obj: ${objectiveText || "0 " + binaries[0]}`, "Subject To", ...constraints, "Bounds",
        ...continuous.map((y) => ` 0 <= ${y} <= 1`), "Binary", ...chunk(binaries), "End"].join("\n");
    const solved = await solveMilp(lp);
    if (solved == null || !solved.optimal) return null;
    const assignment = new Map<string, number>();
    for (const [i, usable] of allowed) {
        const node = nodes[i]!;
        if (node.kind !== "op") continue;
        const best = usable.reduce((a, b) => ((solved.values.get(x(i, b)) ?? 0) > (solved.values.get(x(i, a)) ?? 0) ? b : a));
        assignment.set(node.tensor, best);
    }
    return {assignment, objectiveUs: solved.objective};
}

/** LP-format lines of at most a few hundred characters each. */
function chunk(names: readonly string[]): string[] {
    const lines: string[] = [];
    for (let i = 0; i < names.length; i += 20) lines.push(` ${names.slice(i, i + 20).join(" ")}`);
    return lines;
}
