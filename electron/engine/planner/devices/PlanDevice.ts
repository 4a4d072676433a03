/** A device a multi-device plan can put weights on, and the link between it and the host. */

/**
 * The link between the host and one device, as the profiler measured it with real tensor transfers through the
 * device's backend (`ggml_backend_tensor_set` / `ggml_backend_tensor_get`, native/src/TensorwiseProfiler.cpp).
 * For an rpc-server every one of these is a round trip over the network (ggml-rpc.cpp, RPC_CMD_SET_TENSOR).
 */
export type DeviceLink = {
    /** One small activation copy into the device and the synchronisation after it, µs. */
    readonly latencyUs: number;
    /** One (almost) empty graph launched on the device, µs: paid once per scheduler split that starts there. */
    readonly launchUs: number;
    /** Host → device bandwidth from ordinary (pageable) memory, bytes/µs. */
    readonly h2dBytesPerUs: number;
    /** Device → host bandwidth, bytes/µs. */
    readonly d2hBytesPerUs: number;
};

/** One device of a multi-device plan. */
export type PlanDevice = {
    /** The device name as the profile and `tensorwiseGetDevices()` give it: `"CPU"`, `"Vulkan0"`, `"RPC0"`. */
    readonly name: string;
    /** The buffer type tensor overrides name: `"CPU"`, `"Vulkan0"`, `"RPC0[127.0.0.1:50052]"`. */
    readonly bufferType: string;
    /** Host memory (the CPU): it has no link and no scratch of its own to reserve. */
    readonly isHost: boolean;
    /** Bytes the plan may use there: weights + KV cache + scratch. */
    readonly capacityBytes: number;
    /** `null` for the host. */
    readonly link: DeviceLink | null;
    /**
     * Whether the device's backend runs ops whose weights are in host memory for large micro-batches (CUDA, Vulkan:
     * `offload_op`); ggml-rpc has none (ggml_backend_rpc_device_i.offload_op = NULL).
     */
    readonly offloadsHostWeights: boolean;
    /** Free bytes the device reports: llama.cpp's default layer split is proportional to them. */
    readonly freeBytes: number;
};
