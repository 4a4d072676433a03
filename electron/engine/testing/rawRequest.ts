import http from "node:http";

export type RawAnswer = {status: number; headers: http.IncomingHttpHeaders; text: string};

/** One request exactly as written (any method, any header, repeated ones included), for tests from a client's side. */
export function rawRequest(port: number, options: {method: string; path: string; headers?: Record<string, string | string[]>; body?: string | Buffer}): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
        const request = http.request({host: "127.0.0.1", port, path: options.path, method: options.method, headers: options.headers ?? {}}, (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => (text += chunk));
            response.on("end", () => resolve({status: response.statusCode ?? 0, headers: response.headers, text}));
        });
        request.on("error", reject);
        request.end(options.body);
    });
}
