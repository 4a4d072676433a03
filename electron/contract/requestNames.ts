/**
 * The contract's request and event names as runtime values, for the few places that must enumerate them (the preload
 * builds one named function per request; the web server rejects unknown names). The `satisfies` checks keep these
 * lists exactly in step with {@link Requests} and {@link Events}: a name added to the types fails to compile here
 * until it is listed.
 */
import type {EventName, Events, RequestName, Requests} from "./ipc.js";

const requestNameSet = {
    "machine.describe": true,
    "engine.state": true,
    "engine.restart": true,
    "model.inspect": true,
    "model.autoOffload": true,
    "model.load": true,
    "model.unload": true,
    "model.makeDemo": true,
    "model.current": true,
    "task.cancel": true,
    "conversations.list": true,
    "conversations.notices": true,
    "conversations.get": true,
    "conversations.create": true,
    "conversations.delete": true,
    "conversations.rename": true,
    "conversations.setSettings": true,
    "conversations.deleteMessage": true,
    "conversations.export": true,
    "conversations.import": true,
    "conversations.search": true,
    "chat.send": true,
    "chat.regenerate": true,
    "chat.stop": true,
    "chat.edit": true,
    "library.list": true,
    "library.files": true,
    "library.load": true,
    "library.forget": true,
    "hub.search": true,
    "hub.quants": true,
    "hub.pull": true,
    "dialog.openModel": true,
    "bench.start": true,
    "bench.stop": true,
    "bench.list": true,
    "bench.get": true,
    "bench.export": true,
    "dialog.saveBenchReport": true,
    "server.get": true,
    "server.set": true,
    "rpc.list": true,
    "rpc.add": true,
    "rpc.remove": true,
    "chat.decideTool": true,
    "tools.list": true,
    "tools.save": true,
    "tools.remove": true,
    "tools.start": true,
    "tools.stop": true,
    "tools.import": true
} as const satisfies {[Name in keyof Requests]: true};

const eventNameSet = {
    "engine.state": true,
    "task.progress": true,
    "chat.delta": true,
    "chat.prompt": true,
    "chat.done": true,
    "chat.error": true,
    "bench.progress": true,
    "bench.done": true,
    "bench.error": true,
    "server.state": true,
    "library.files": true,
    "chat.message": true,
    "tools.state": true
} as const satisfies {[Name in keyof Events]: true};

export const requestNames = Object.keys(requestNameSet) as RequestName[];
export const eventNames = Object.keys(eventNameSet) as EventName[];

export function isEventName(name: string): name is EventName {
    return Object.hasOwn(eventNameSet, name);
}

export function isRequestName(name: string): name is RequestName {
    return Object.hasOwn(requestNameSet, name);
}
