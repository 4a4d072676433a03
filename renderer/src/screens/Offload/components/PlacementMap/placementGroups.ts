import type {PlacementView} from "../../../../../../electron/contract/ipc";

/** One block of the placement map: the layers × some of the roles, each cell a buffer type (`null`: no tensor). */
export type PlacementGroup = {
    /** `"dense"`: attention, norms, router, shared experts; `"experts"`: the routed expert weights. */
    readonly kind: "dense" | "experts";
    readonly roles: readonly string[];
    /** `rows[layer][i]` = buffer type of `blk.<layer>.<roles[i]>`. */
    readonly rows: readonly (readonly (string | null)[])[];
};

/**
 * The placement map's blocks: the dense weights, then — for a mixture-of-experts model — the routed expert weights
 * (the engine names them in `expertRoles`) as their own block, since they hold most of the bytes and are what MoE
 * placements move. A dense model has one block.
 */
export function placementGroups(placement: Pick<PlacementView, "roles" | "grid" | "expertRoles">): PlacementGroup[] {
    const experts = new Set(placement.expertRoles ?? []);
    const pick = (expert: boolean): PlacementGroup => {
        const indices = placement.roles.flatMap((role, i) => experts.has(role) === expert ? [i] : []);
        return {
            kind: expert ? "experts" : "dense",
            roles: indices.map((i) => placement.roles[i]!),
            rows: placement.grid.map((row) => indices.map((i) => row[i] ?? null))
        };
    };
    return [pick(false), pick(true)].filter((group) => group.roles.length > 0);
}
