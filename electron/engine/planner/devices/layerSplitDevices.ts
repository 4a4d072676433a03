/**
 * llama.cpp's layer split over several devices: which device each repeating layer (and the output layer) goes to.
 * source: llama_model::load_tensors — split points are the cumulative share of each device (free memory by default,
 * `-ts` when given), i_gpu_start = max(n_layer + 1 − n_gpu_layers, 0), and layer il goes to the device
 * `upper_bound(splits, (il − i_gpu_start) / act_gpu_layers)`; layers before i_gpu_start stay on the CPU.
 */

/**
 * Device per layer `0 … layerCount` (the last entry is the output layer), as indexes into `shares` (one share per
 * non-CPU device, in llama.cpp's device order: rpc-servers first, then GPUs — llama_model_load_from_file_impl), or
 * `-1` for the CPU.
 */
export function layerSplitDevices(layerCount: number, gpuLayers: number, shares: readonly number[]): number[] {
    const total = shares.reduce((sum, share) => sum + Math.max(0, share), 0);
    const splits: number[] = [];
    let sum = 0;
    for (const share of shares) {
        sum += Math.max(0, share);
        splits.push(total > 0 ? sum / total : 1);
    }
    const start = Math.max(layerCount + 1 - gpuLayers, 0);
    const active = shares.length === 0 ? 0 : Math.min(gpuLayers, layerCount + 1);
    const devices: number[] = [];
    for (let il = 0; il <= layerCount; il++) {
        if (il < start || il - start >= active) {
            devices.push(-1);
            continue;
        }
        // upper_bound: the first split point strictly greater than the layer's position
        const position = Math.fround((il - start) / active);
        const index = splits.findIndex((point) => Math.fround(point) > position);
        devices.push(index < 0 ? shares.length - 1 : index);
    }
    return devices;
}
