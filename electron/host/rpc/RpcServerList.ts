/**
 * The rpc-servers the user added in the settings, kept in one JSON file in the app's data folder (beside
 * `conversations/`), every write atomic (storage/JsonFileStore.ts), like the model library (ModelLibrary.ts). A file that
 * cannot be read as a list is moved aside (never overwritten) and the list starts empty.
 */
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {MAX_RPC_SERVERS, parseRpcEndpoint} from "../../engine/rpc/parseRpcEndpoint.js";
import {readJsonFile, writeJsonFile} from "../storage/JsonFileStore.js";

/** The list's file name in the data folder. */
export const RPC_SERVERS_FILE = "rpc-servers.json";
const FORMAT_VERSION = 1;

function isEndpointList(value: unknown): value is string[] {
    return Array.isArray(value) && value.every((entry) => {
        try {
            return typeof entry === "string" && parseRpcEndpoint(entry).text === entry;
        } catch {
            return false;
        }
    });
}

export class RpcServerList {
    private endpoints: string[] = [];
    private reading: Promise<void> | null = null;
    private writes: Promise<unknown> = Promise.resolve();

    /** `file`: where the list is kept (see {@link RPC_SERVERS_FILE}); read on first use. */
    constructor(readonly file: string) {}

    /** The endpoints (`host:port`), in the order added. */
    async list(): Promise<string[]> {
        await this.ready();
        return [...this.endpoints];
    }

    /** Adds `endpoint` (already in parseRpcEndpoint's form) at the end; adding one twice keeps one. */
    async add(endpoint: string): Promise<void> {
        await this.change((endpoints) => {
            if (endpoints.includes(endpoint))
                return endpoints;
            if (endpoints.length >= MAX_RPC_SERVERS)
                throw new TensorwiseError("bad-request", `at most ${MAX_RPC_SERVERS} rpc-servers can be added: remove one first`);
            return [...endpoints, endpoint];
        });
    }

    /** Removes `endpoint`; removing one that is not there changes nothing. */
    async remove(endpoint: string): Promise<void> {
        await this.change((endpoints) => endpoints.filter((entry) => entry !== endpoint));
    }

    private async change(update: (endpoints: string[]) => string[]): Promise<void> {
        await this.ready();
        const write = this.writes.catch(() => {}).then(async () => {
            const next = update(this.endpoints);
            await writeJsonFile(this.file, FORMAT_VERSION, {servers: next});
            this.endpoints = next;
        });
        this.writes = write;
        await write;
    }

    private ready(): Promise<void> {
        this.reading ??= this.read();
        return this.reading;
    }

    private async read(): Promise<void> {
        const servers = await readJsonFile(this.file, "the rpc-server list", (parsed) => {
            const kept = (parsed as {servers?: unknown} | null)?.servers;
            return isEndpointList(kept) ? kept : null;
        });
        if (servers != null)
            this.endpoints = servers.slice(0, MAX_RPC_SERVERS);
    }
}
