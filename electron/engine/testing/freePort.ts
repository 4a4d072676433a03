import net from "node:net";

/** A port free on 127.0.0.1 right now (the OS picks it; free until someone else takes it), for a test's server. */
export async function freePort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const {port} = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
}
