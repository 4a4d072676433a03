/**
 * ggml-rpc aborts the whole process when an rpc-server it uses dies or cannot be reached (ggml-rpc.cpp:
 * RPC_STATUS_ASSERT "Remote RPC server crashed or returned malformed response", "Failed to connect to <endpoint>",
 * "RPC handshake failed for <endpoint>"). The app runs the engine in a child process, so it survives; this turns the
 * child's last stderr lines into one sentence the user can act on, or `null` when they show no RPC failure.
 */
export function explainRpcAbort(stderr: string): string | null {
    const endpoint = /(?:Failed to connect to|RPC handshake failed for) (\S+)/.exec(stderr)?.[1];
    if (endpoint != null)
        return `the rpc-server at ${endpoint} stopped answering, so the engine process ended: start it again or reload the model without it`;
    if (stderr.includes("Remote RPC server crashed"))
        return "an rpc-server holding part of the model stopped answering, so the engine process ended: reload the model without it, or restart that rpc-server and reload";
    return null;
}
