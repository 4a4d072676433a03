/**
 * Compiles a per-tensor placement into a short list of anchored llama.cpp tensor buffer-type overrides, and proves
 * the list right by simulating llama.cpp's first-match-wins search over every tensor of the model.
 */
import { validatePlacement, type Placement, type PlacementTensor, type TensorBufferOverride } from "./Placement.js";
import { escapeRegexLiteral, groupIfAlternation, integerSetToRegex, literalAlternation } from "./regexSource.js";
import {
    llamaCppNaturalBufferType,
    plannedBufferType,
    verifyCompiledPlacement,
    type NaturalBufferType,
    type PlacementMismatch
} from "./verifyOverrides.js";

/** source: `llama_max_tensor_buft_overrides()` in src/llama.cpp of the bundled llama.cpp (returns 4096). */
export const LLAMA_MAX_TENSOR_BUFT_OVERRIDES = 4096;

/**
 * Most overrides one model load may carry: the limit is the size of the override array *including* its
 * `{nullptr, nullptr}` terminator (source: `common_fit_params` in common/fit.cpp stops at `itbo + 1 >= ntbo`).
 */
export const MAX_OVERRIDE_PATTERNS = LLAMA_MAX_TENSOR_BUFT_OVERRIDES - 1;

/** Above this layer number we do not widen layer sets over absent layers (keeps work bounded on odd names). */
const MAX_WIDENED_LAYER = 4096;

/** Layer-number regex matching every layer; used only when no present layer outside the set would be hit. */
const ANY_LAYER = "[0-9]+";

/** How the override list was built (all are proved by simulation; the shortest proved one is returned). */
export type CompileStrategy =
    | "layersWithExceptions"
    | "rolesWithExceptions"
    | "byLayer"
    | "byRole"
    | "perTensor";

/** Overrides realising a placement, in the order llama.cpp must try them. */
export interface CompiledPlacement {
    /** Anchored patterns → buffer types; pass in this order (first match wins). Empty when nothing moves. */
    readonly overrides: readonly TensorBufferOverride[];
    /** Which strategy produced the list. */
    readonly strategy: CompileStrategy;
}

/** Options for {@link compilePlacement}. */
export interface CompilePlacementOptions {
    /** Where a tensor goes with no override. Defaults to `llamaCppNaturalBufferType(placement.defaultBufferType)`. */
    readonly natural?: NaturalBufferType;
    /** Most overrides allowed. Defaults to {@link MAX_OVERRIDE_PATTERNS}; larger values are refused. */
    readonly maxOverrides?: number;
}

/** A placement that cannot be expressed as overrides; `mismatches` lists tensors a candidate list would misplace. */
export class PlacementCompileError extends Error {
    readonly code = "bad-placement";
    readonly mismatches: readonly PlacementMismatch[];

    constructor(message: string, mismatches: readonly PlacementMismatch[] = []) {
        super(message);
        this.name = "PlacementCompileError";
        this.mismatches = mismatches;
    }
}

interface Cell {
    readonly planned: string;
    readonly natural: string;
}

/** Repeating-layer tensors as a grid: column = name after `blk.N.` (e.g. `ffn_up.weight`), row = layer. */
interface Grid {
    readonly layers: readonly number[];
    readonly columns: readonly string[];
    readonly cells: ReadonlyMap<string, ReadonlyMap<number, Cell>>;
    readonly maxLayer: number;
}

interface NamedCell extends Cell {
    readonly name: string;
}

const LAYER_TENSOR = /^blk\.(0|[1-9][0-9]*)\.(.+)$/;

function buildGrid(cells: readonly NamedCell[]): { grid: Grid; globals: NamedCell[] } {
    const byColumn = new Map<string, Map<number, Cell>>();
    const layers = new Set<number>();
    const globals: NamedCell[] = [];
    for (const cell of cells) {
        const match = LAYER_TENSOR.exec(cell.name);
        const layer = match ? Number(match[1]) : NaN;
        if (!match || !Number.isSafeInteger(layer)) {
            globals.push(cell);
            continue;
        }
        const column = match[2] as string;
        const rows = byColumn.get(column) ?? new Map<number, Cell>();
        rows.set(layer, { planned: cell.planned, natural: cell.natural });
        byColumn.set(column, rows);
        layers.add(layer);
    }
    const sortedLayers = [...layers].sort((a, b) => a - b);
    const grid = { layers: sortedLayers, columns: [...byColumn.keys()], cells: byColumn, maxLayer: sortedLayers.at(-1) ?? -1 };
    return { grid, globals };
}

function cellAt(grid: Grid, column: string, layer: number): Cell | undefined {
    return grid.cells.get(column)?.get(layer);
}

function shortest(candidates: readonly string[]): string {
    return candidates.reduce((best, next) => (next.length < best.length ? next : best));
}

/**
 * Regex for a layer set that must match `required` and may also match any layer for which `allowed` holds (absent
 * layers and layers whose cells already resolve right). Tries the plain set, gaps filled, everything allowed, and
 * an open top end past the last layer; returns the shortest.
 */
function layerRegex(grid: Grid, required: readonly number[], allowed: (layer: number) => boolean): string {
    const plain = integerSetToRegex(required);
    if (grid.maxLayer > MAX_WIDENED_LAYER) return plain;
    const wide = new Set(required);
    for (let layer = 0; layer <= grid.maxLayer; layer++) if (allowed(layer)) wide.add(layer);
    if (wide.size === grid.maxLayer + 1) return ANY_LAYER;
    // a loop, not Math.min(...required): a spread of one argument per tensor overflows the stack on huge models
    const lo = required.reduce((low, value) => Math.min(low, value), Infinity);
    const hi = required.reduce((high, value) => Math.max(high, value), -Infinity);
    const gapFilled = [...wide].filter((layer) => layer >= lo && layer <= hi);
    const sets = [gapFilled, [...wide]];
    const topOfDigits = 10 ** String(grid.maxLayer).length - 1;
    for (const set of [required, gapFilled, [...wide]]) {
        if (set.includes(grid.maxLayer)) {
            const extended = [...set];
            for (let layer = grid.maxLayer + 1; layer <= topOfDigits; layer++) extended.push(layer);
            sets.push(extended);
        }
    }
    return shortest([plain, ...sets.map(integerSetToRegex)]);
}

function cellsPattern(layers: string, columns: readonly string[]): string {
    return `^blk\\.${groupIfAlternation(layers)}\\.${groupIfAlternation(literalAlternation(columns))}$`;
}

function layerPrefixPattern(layers: string): string {
    return `^blk\\.${groupIfAlternation(layers)}\\.`;
}

/** The most common planned buffer type among cells (ties: alphabetical, for determinism). */
function majority(cells: Iterable<Cell>): string {
    const counts = new Map<string, number>();
    for (const cell of cells) counts.set(cell.planned, (counts.get(cell.planned) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? "";
}

/** The base a row/column gets, or `null` when its cells need no base pattern. */
function chooseBase(cells: readonly Cell[], withBase: boolean): string | null {
    if (!withBase) return null;
    const base = majority(cells);
    return cells.some((cell) => cell.planned === base && cell.natural !== base) ? base : null;
}

function needsException(cell: Cell, base: string | null): boolean {
    return base === null ? cell.planned !== cell.natural : cell.planned !== base;
}

/** A rectangle of cells (layers × columns) that must all go to one buffer type. */
interface Block {
    readonly bufferType: string;
    readonly layers: number[];
    readonly columns: string[];
}

function addToBlock(blocks: Map<string, Block>, key: string, make: () => Block): Block {
    const block = blocks.get(key) ?? make();
    blocks.set(key, block);
    return block;
}

/** Exception blocks first, biggest first (llama.cpp scans the list per tensor, so common matches go early). */
function blockOverrides(grid: Grid, blocks: Iterable<Block>): TensorBufferOverride[] {
    return [...blocks]
        .sort((a, b) => b.layers.length * b.columns.length - a.layers.length * a.columns.length)
        .map((block) => {
            const allowed = (layer: number): boolean =>
                block.columns.every((column) => {
                    const cell = cellAt(grid, column, layer);
                    return cell === undefined || cell.planned === block.bufferType;
                });
            return { pattern: cellsPattern(layerRegex(grid, block.layers, allowed), block.columns), bufferType: block.bufferType };
        });
}

/**
 * Per column (role): optionally a base pattern over every layer for the column's majority buffer type, preceded by
 * exception blocks; columns sharing the same exception layers share a pattern.
 */
function byColumns(grid: Grid, withBase: boolean): TensorBufferOverride[] {
    const exceptions = new Map<string, Block>();
    const bases = new Map<string, string[]>();
    for (const column of grid.columns) {
        const rows = grid.cells.get(column) as ReadonlyMap<number, Cell>;
        const base = chooseBase([...rows.values()], withBase);
        const layersByPlanned = new Map<string, number[]>();
        for (const [layer, cell] of rows) {
            if (!needsException(cell, base)) continue;
            layersByPlanned.set(cell.planned, [...(layersByPlanned.get(cell.planned) ?? []), layer]);
        }
        for (const [bufferType, layers] of layersByPlanned) {
            const key = `${bufferType}\0${layers.join(" ")}`;
            addToBlock(exceptions, key, () => ({ bufferType, layers, columns: [] })).columns.push(column);
        }
        if (base !== null) bases.set(base, [...(bases.get(base) ?? []), column]);
    }
    const baseOverrides = [...bases].map(([bufferType, columns]) => ({ pattern: cellsPattern(ANY_LAYER, columns), bufferType }));
    return [...blockOverrides(grid, exceptions.values()), ...baseOverrides];
}

/**
 * Per layer: optionally a prefix pattern `^blk\.N\.` for the layer's majority buffer type, preceded by exception
 * blocks; layers sharing the same exception columns share a pattern.
 */
function byLayers(grid: Grid, withBase: boolean): TensorBufferOverride[] {
    const exceptions = new Map<string, Block>();
    const exceptionCells = new Set<string>();
    const bases = new Map<string, number[]>();
    for (const layer of grid.layers) {
        const row = grid.columns.flatMap((column) => {
            const cell = cellAt(grid, column, layer);
            return cell ? [{ column, cell }] : [];
        });
        const base = chooseBase(row.map((entry) => entry.cell), withBase);
        const columnsByPlanned = new Map<string, string[]>();
        for (const { column, cell } of row) {
            if (!needsException(cell, base)) continue;
            columnsByPlanned.set(cell.planned, [...(columnsByPlanned.get(cell.planned) ?? []), column]);
            exceptionCells.add(`${layer}\0${column}`);
        }
        for (const [bufferType, columns] of columnsByPlanned) {
            const key = `${bufferType}\0${columns.join("\0")}`;
            addToBlock(exceptions, key, () => ({ bufferType, layers: [], columns })).layers.push(layer);
        }
        if (base !== null) bases.set(base, [...(bases.get(base) ?? []), layer]);
    }
    const baseOverrides = [...bases].map(([bufferType, layers]) => {
        const allowed = (layer: number): boolean =>
            grid.columns.every((column) => {
                const cell = cellAt(grid, column, layer);
                return cell === undefined || cell.planned === bufferType || exceptionCells.has(`${layer}\0${column}`);
            });
        return { pattern: layerPrefixPattern(layerRegex(grid, layers, allowed)), bufferType };
    });
    return [...blockOverrides(grid, exceptions.values()), ...baseOverrides];
}

/** Tensors outside the layers: one exact-names pattern per buffer type. */
function globalOverrides(globals: readonly NamedCell[]): TensorBufferOverride[] {
    const namesByBufferType = new Map<string, string[]>();
    for (const cell of globals) {
        if (cell.planned === cell.natural) continue;
        namesByBufferType.set(cell.planned, [...(namesByBufferType.get(cell.planned) ?? []), cell.name]);
    }
    return [...namesByBufferType].map(([bufferType, names]) => ({ pattern: `^${groupIfAlternation(literalAlternation(names))}$`, bufferType }));
}

function perTensor(cells: readonly NamedCell[]): TensorBufferOverride[] {
    return cells
        .filter((cell) => cell.planned !== cell.natural)
        .map((cell) => ({ pattern: `^${escapeRegexLiteral(cell.name)}$`, bufferType: cell.planned }));
}

function totalLength(overrides: readonly TensorBufferOverride[]): number {
    return overrides.reduce((sum, o) => sum + o.pattern.length + o.bufferType.length, 0);
}

/**
 * Compiles a placement into llama.cpp tensor buffer-type overrides: anchored ECMAScript patterns, grouped by buffer
 * type, role and layer range (`^blk\.(?:[0-9]|1[0-5])\.ffn_(?:up|gate)\.weight$` → `"CPU"`), ordered so that
 * first-match-wins realises the plan. Tensors already where llama.cpp would put them get no pattern.
 *
 * Several strategies are tried; each result is verified by simulating llama.cpp over every tensor, and the shortest
 * verified list is returned. Throws {@link PlacementCompileError} if the placement names unknown tensors, no list
 * verifies, or the list would exceed llama.cpp's override limit.
 */
export function compilePlacement(
    placement: Placement,
    tensors: readonly Pick<PlacementTensor, "name">[],
    options: CompilePlacementOptions = {}
): CompiledPlacement {
    validatePlacement(placement, tensors);
    const natural = options.natural ?? llamaCppNaturalBufferType(placement.defaultBufferType);
    const maxOverrides = options.maxOverrides ?? MAX_OVERRIDE_PATTERNS;
    if (!Number.isSafeInteger(maxOverrides) || maxOverrides < 0 || maxOverrides > MAX_OVERRIDE_PATTERNS) {
        throw new RangeError(`maxOverrides must be an integer in [0, ${MAX_OVERRIDE_PATTERNS}], got ${maxOverrides}`);
    }

    const cells = tensors.map(({ name }) => ({ name, planned: plannedBufferType(placement, name, natural), natural: natural(name) }));
    const { grid, globals } = buildGrid(cells);
    const rest = globalOverrides(globals);
    const candidates: { strategy: CompileStrategy; overrides: TensorBufferOverride[] }[] = [
        { strategy: "layersWithExceptions", overrides: [...byLayers(grid, true), ...rest] },
        { strategy: "rolesWithExceptions", overrides: [...byColumns(grid, true), ...rest] },
        { strategy: "byLayer", overrides: [...byLayers(grid, false), ...rest] },
        { strategy: "byRole", overrides: [...byColumns(grid, false), ...rest] }
    ];
    candidates.sort((a, b) => a.overrides.length - b.overrides.length || totalLength(a.overrides) - totalLength(b.overrides));
    candidates.push({ strategy: "perTensor", overrides: perTensor(cells) });

    let lastMismatches: PlacementMismatch[] = [];
    for (const candidate of candidates) {
        lastMismatches = verifyCompiledPlacement(placement, tensors, candidate.overrides, natural);
        if (lastMismatches.length > 0) continue;
        if (candidate.overrides.length > maxOverrides) {
            throw new PlacementCompileError(
                `this placement needs ${candidate.overrides.length} tensor overrides even after compression, more than ` +
                    `llama.cpp accepts (${maxOverrides}); group tensors by layer ranges or roles instead of scattering them`
            );
        }
        return candidate;
    }
    const first = lastMismatches[0];
    throw new PlacementCompileError(
        `could not compile the placement: ${lastMismatches.length} tensor(s) would be misplaced` +
            (first ? `, e.g. ${first.tensor} planned ${first.planned} but resolves to ${first.resolved}` : ""),
        lastMismatches
    );
}
