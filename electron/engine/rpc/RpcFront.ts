/**
 * A small TCP front for llama.cpp's stock rpc-server (tools/rpc/rpc-server.cpp). That server serves one client at a
 * time and sets no timeouts (ggml_backend_rpc_start_server: accept, then rpc_serve_client until recv fails), so one
 * silent connection, or one that declares a huge request and stops, holds it for every other client forever. We do
 * not patch its C++ (the libraries are node-llama-cpp's prebuilt ones), and socket timeouts cannot be set on another
 * process's sockets, so the worker listens on a private loopback port and this front listens on the public address:
 * - one client at a time is connected to the worker; the others wait in a bounded queue, in arrival order;
 * - the front answers a client's hello itself (the worker's version, no transport capabilities: a relay carries plain
 *   TCP), and a client must send its hello and then its whole first request within the hello deadline, or it is
 *   closed. A real client sends that request as soon as its hello is answered (ggml-rpc's negotiate_hello, then the
 *   command that opened the connection, a few bytes), so only a client that does is placed in the queue; one that
 *   sends a hello and waits never reaches the worker. Clients still in their hello hold places too, but when every
 *   place is taken a newcomer takes the place of the oldest of them, so idle clients cannot keep out a client that
 *   completes its hello and request promptly;
 * - when a client's turn comes the front sends the worker a hello of its own and checks the answer, then relays the
 *   client's first request and everything after it;
 * - once a request has begun, its bytes must keep coming (the idle deadline restarts on each chunk, and does not run
 *   while the worker is not reading); a client that stops mid-request is closed and the next is served;
 * - a client that stops reading the worker's replies for the idle deadline is closed;
 * - a request declaring more than the size limit, an unknown command or a second hello is refused before the worker
 *   allocates anything for it.
 * Between requests a served client may stay silent as long as it likes: an engine holding a model on the worker sends
 * nothing while nobody chats.
 */
import net from "node:net";
import {
    helloReply, helloRequest, readHelloReply, RPC_HELLO_REPLY_BYTES, RPC_HELLO_REQUEST_BYTES, RPC_REPLY_HEADER_BYTES,
    RPC_REQUEST_HEADER_BYTES, type RpcVersion
} from "./rpcProtocol.js";
import {RpcRequestFramer} from "./RpcRequestFramer.js";

/** How long a client has from its connect to send its hello and, once the front answered it, its first request. */
export const RPC_HELLO_TIMEOUT_MS = 5000;
/** How long a request may stall mid-way (or a reply go unread) before the client is closed. */
export const RPC_MESSAGE_IDLE_TIMEOUT_MS = 10_000;
/**
 * The largest request payload accepted. A real client's largest request is RPC_CMD_SET_TENSOR with a whole tensor:
 * llama.cpp's loader uploads each weight in one ggml_backend_tensor_set to a device without async host buffers, as
 * an RPC device is (llama_model_loader::load_all_data), and ggml-rpc sends it as one request
 * (ggml_backend_rpc_buffer_set_tensor). The largest tensor of the models this app is built for is Llama-3-8B F16's
 * token_embd.weight, 128256 × 4096 × 2 bytes = 1002 MiB, plus a few hundred bytes of header: 1 GiB holds it. A bigger
 * model needs `--max-message-mib`. Graph requests are a few MiB (one rpc_tensor of ~300 bytes per node).
 */
export const RPC_MAX_MESSAGE_BYTES = 2 ** 30;
/**
 * How long the worker has to take an admitted client's connection and answer its hello. Longer than the client's
 * deadlines: the worker may still be freeing what the previous client left (a 1 GiB request buffer it zero-filled).
 * A worker that does not answer in this time is hung, or held by a process connected to its private port directly.
 */
export const RPC_WORKER_ANSWER_TIMEOUT_MS = 30_000;
/**
 * Clients that may wait (in their hello or for their turn) beside the one served. A newcomer beyond them takes the
 * place of the oldest client still in its hello; when all of them wait for their turn, it is closed at once.
 */
export const RPC_MAX_WAITING_CLIENTS = 8;
/** Bytes a waiting client may send past its hello before it is served (a real client sends one small request, then awaits its reply). */
const WAITING_EXTRA_BYTES = 64 * 1024;

export type RpcFrontOptions = {
    /** The public address clients connect to. */
    host: string;
    port: number;
    /** Where the stock rpc-server listens (loopback). */
    worker: {host: string; port: number};
    /** The worker's protocol version, as it answered a hello (probeRpcServer.ts): the front answers clients' hellos with it. */
    workerVersion: RpcVersion;
    /** Defaults to {@link RPC_HELLO_TIMEOUT_MS}. */
    helloTimeoutMs?: number;
    /** Defaults to {@link RPC_MESSAGE_IDLE_TIMEOUT_MS}. */
    messageIdleTimeoutMs?: number;
    /** Defaults to {@link RPC_MAX_MESSAGE_BYTES}. */
    maxMessageBytes?: number;
    /** Defaults to {@link RPC_MAX_WAITING_CLIENTS}. */
    maxWaitingClients?: number;
    /** One line per client closed by a deadline or a refusal, for the server's log. */
    onLog?: (line: string) => void;
};

type Limits = Required<Omit<RpcFrontOptions, "host" | "port" | "worker" | "workerVersion" | "onLog">>;

export class RpcFront {
    private readonly waiting: ClientSession[] = [];
    private served: ClientSession | null = null;
    private readonly sessions = new Set<ClientSession>();
    /** Clients that have not yet sent their hello and first request, oldest first. */
    private readonly handshaking = new Set<ClientSession>();
    private closed = false;

    private constructor(private readonly server: net.Server, private readonly options: RpcFrontOptions, readonly limits: Limits) {}

    /** Listens on `options.host:port`; rejects (EADDRINUSE, …) when it cannot. */
    static async listen(options: RpcFrontOptions): Promise<RpcFront> {
        const limits: Limits = {
            helloTimeoutMs: options.helloTimeoutMs ?? RPC_HELLO_TIMEOUT_MS,
            messageIdleTimeoutMs: options.messageIdleTimeoutMs ?? RPC_MESSAGE_IDLE_TIMEOUT_MS,
            maxMessageBytes: options.maxMessageBytes ?? RPC_MAX_MESSAGE_BYTES,
            maxWaitingClients: options.maxWaitingClients ?? RPC_MAX_WAITING_CLIENTS
        };
        const server = net.createServer();
        const front = new RpcFront(server, options, limits);
        server.on("connection", (socket) => front.accept(socket));
        await new Promise<void>((resolve, reject) => {
            server.once("error", reject);
            server.listen({host: options.host, port: options.port}, () => {
                server.off("error", reject);
                resolve();
            });
        });
        return front;
    }

    /** The address it listens on. */
    get address(): net.AddressInfo {
        return this.server.address() as net.AddressInfo;
    }

    /** Stops listening and closes every client. */
    async close(): Promise<void> {
        this.closed = true;
        for (const session of [...this.sessions])
            session.end(null);
        await new Promise((resolve) => this.server.close(resolve));
    }

    private accept(socket: net.Socket): void {
        if (this.closed) {
            socket.destroy();
            return;
        }
        if (this.sessions.size - (this.served == null ? 0 : 1) >= this.limits.maxWaitingClients) {
            const oldest = this.handshaking.values().next();
            if (oldest.done === true) {
                this.log(`${peer(socket)}: closed at once, ${this.limits.maxWaitingClients} clients already wait for their turn`);
                socket.destroy();
                return;
            }
            oldest.value.end(`a newer client took its place: all ${this.limits.maxWaitingClients} places were taken and it had not yet sent ` +
                "its hello and first request");
        }
        const session = new ClientSession(socket, this.limits, helloReply(this.options.workerVersion), {
            ready: () => {
                this.handshaking.delete(session);
                this.waiting.push(session);
                this.pump();
            },
            ended: (reason) => {
                this.sessions.delete(session);
                this.handshaking.delete(session);
                const index = this.waiting.indexOf(session);
                if (index >= 0)
                    this.waiting.splice(index, 1);
                if (this.served === session)
                    this.served = null;
                if (reason != null)
                    this.log(`${session.peer}: closed, ${reason}`);
                this.pump();
            }
        });
        this.sessions.add(session);
        this.handshaking.add(session);
    }

    private pump(): void {
        if (this.closed || this.served != null)
            return;
        const next = this.waiting.shift();
        if (next == null)
            return;
        this.served = next;
        next.admit(this.options.worker);
    }

    private log(line: string): void {
        this.options.onLog?.(`rpc-server front: ${line}`);
    }
}

function peer(socket: net.Socket): string {
    return socket.remoteFamily === "IPv6" ? `[${socket.remoteAddress}]:${socket.remotePort}` : `${socket.remoteAddress}:${socket.remotePort}`;
}

type SessionEvents = {ready(): void; ended(reason: string | null): void};

/** The bytes of a hello request, as the framer has checked it: the client's first bytes. */
const CLIENT_HELLO_BYTES = RPC_REQUEST_HEADER_BYTES + RPC_HELLO_REQUEST_BYTES;
/** The bytes of the worker's answer to the front's hello. */
const WORKER_HELLO_BYTES = RPC_REPLY_HEADER_BYTES + RPC_HELLO_REPLY_BYTES;

/** One client: its hello and first request, its wait, then its bytes relayed to and from the worker under the deadlines. */
class ClientSession {
    readonly peer: string;
    private readonly framer: RpcRequestFramer;
    /** What the client sent before it was served (its hello, perhaps more), for the worker. */
    private early: Buffer[] = [];
    private earlyBytes = 0;
    private worker: net.Socket | null = null;
    /** The worker's answer to the front's hello, while it arrives. */
    private workerHello = Buffer.alloc(0);
    private readonly connectedAt = performance.now();
    private helloAnswered = false;
    /** Whether its hello and first request are in, so it waits in the queue or is served. */
    private inLine = false;
    private timer: NodeJS.Timeout | null = null;
    private clientPausedForWorker = false;
    private replyStalled = false;
    private ended = false;

    constructor(private readonly client: net.Socket, private readonly limits: Limits, private readonly helloReply: Buffer,
        private readonly events: SessionEvents) {
        this.peer = peer(client);
        this.framer = new RpcRequestFramer(limits.maxMessageBytes);
        client.setNoDelay(true);
        client.on("data", (chunk: Buffer) => this.fromClient(chunk));
        client.on("error", () => this.end(null));
        client.on("close", () => this.end(null));
        this.arm(limits.helloTimeoutMs, `it sent no RPC hello within ${limits.helloTimeoutMs} ms`);
    }

    /**
     * Connects the client to the worker: the front's hello, the client's early bytes past its own hello, then
     * everything both ways (written now, the socket sends them in this order once connected).
     */
    admit(address: {host: string; port: number}): void {
        if (this.ended)
            return;
        const worker = net.connect(address);
        this.worker = worker;
        worker.setNoDelay(true);
        worker.write(helloRequest());
        const early = Buffer.concat(this.early).subarray(CLIENT_HELLO_BYTES);
        this.early = [];
        if (early.length > 0)
            worker.write(early);
        this.client.resume();
        // the worker must take the connection and answer the hello in time: a worker that does not is held by a
        // process that connected to its private port directly, or hung
        this.arm(RPC_WORKER_ANSWER_TIMEOUT_MS, `the worker on ${address.host}:${address.port} did not answer its hello within ` +
            `${RPC_WORKER_ANSWER_TIMEOUT_MS} ms (is another process connected to it directly?)`);
        worker.on("data", (chunk: Buffer) => this.fromWorker(chunk));
        worker.on("error", () => this.end(null));
        worker.on("close", () => this.end(null));
    }

    /** Ends the session, `reason` (a clause) saying why when the front closed it rather than either side. */
    end(reason: string | null): void {
        if (this.ended)
            return;
        this.ended = true;
        this.disarm();
        this.client.destroy();
        this.worker?.destroy();
        this.events.ended(reason);
    }

    private fromClient(chunk: Buffer): void {
        if (this.ended)
            return;
        const problem = this.framer.push(chunk);
        if (problem != null) {
            this.end(problem);
            return;
        }
        if (this.worker == null) {
            this.early.push(chunk);
            this.earlyBytes += chunk.length;
            if (this.earlyBytes > WAITING_EXTRA_BYTES)
                this.client.pause();
            if (this.inLine) {
                this.armIdle();
                return;
            }
            if (!this.helloAnswered && this.framer.helloDone) {
                this.helloAnswered = true;
                this.client.write(this.helloReply);
                const left = Math.max(0, this.limits.helloTimeoutMs - (performance.now() - this.connectedAt));
                this.arm(left, `it sent its hello but no request after it within ${this.limits.helloTimeoutMs} ms of its connect`);
            }
            if (this.framer.requestsDone >= 2) {
                this.inLine = true;
                this.disarm();
                this.events.ready();
            }
            return;
        }
        if (!this.worker.write(chunk) && !this.clientPausedForWorker) {
            this.clientPausedForWorker = true;
            this.client.pause();
            this.worker.once("drain", () => {
                this.clientPausedForWorker = false;
                this.client.resume();
                this.armIdle();
            });
        }
        this.armIdle();
    }

    private fromWorker(received: Buffer): void {
        if (this.ended)
            return;
        let chunk = received;
        if (this.workerHello.length < WORKER_HELLO_BYTES) {
            // the answer to the front's hello: checked, not relayed (the client had the front's)
            const need = WORKER_HELLO_BYTES - this.workerHello.length;
            this.workerHello = Buffer.concat([this.workerHello, chunk.subarray(0, need)]);
            chunk = chunk.subarray(need);
            if (this.workerHello.length < WORKER_HELLO_BYTES)
                return;
            const {problem} = readHelloReply(this.workerHello);
            if (problem != null || !this.workerHello.subarray(RPC_REPLY_HEADER_BYTES, RPC_REPLY_HEADER_BYTES + 3)
                .equals(this.helloReply.subarray(RPC_REPLY_HEADER_BYTES, RPC_REPLY_HEADER_BYTES + 3))) {
                this.end(`the worker answered its hello with ${problem ?? "another version than it did at start"}`);
                return;
            }
            this.armIdle();
            if (chunk.length === 0)
                return;
        }
        if (!this.client.write(chunk) && !this.replyStalled) {
            this.replyStalled = true;
            this.worker!.pause();
            this.armIdle();
            this.client.once("drain", () => {
                this.replyStalled = false;
                this.worker?.resume();
                this.armIdle();
            });
        }
    }

    /**
     * The idle deadline, while it applies: a request is partly received and the worker is reading, or a reply waits
     * for the client to read it. Otherwise (between requests, or the worker busy) no deadline runs.
     */
    private armIdle(): void {
        const helloPending = this.worker != null && this.workerHello.length < WORKER_HELLO_BYTES;
        if (this.ended || helloPending)
            return;
        const ms = this.limits.messageIdleTimeoutMs;
        if (this.replyStalled)
            this.arm(ms, `it read none of the worker's reply for ${ms} ms`);
        else if (this.framer.inRequest && !this.clientPausedForWorker)
            this.arm(ms, `it stopped for ${ms} ms in the middle of a request`);
        else
            this.disarm();
    }

    private arm(ms: number, reason: string): void {
        this.disarm();
        this.timer = setTimeout(() => this.end(reason), ms);
    }

    private disarm(): void {
        if (this.timer != null)
            clearTimeout(this.timer);
        this.timer = null;
    }
}
