// The mutants scripts/check/mutation-check.mjs applies: each a product change that would ship a visible bug, the exact
// text it replaces (must occur once in `file`), and the test files expected to fail. docs/testing.md explains each one.

/** @type {{id: string, description: string, file: string, find: string, replace: string, tests: string[]}[]} */
export const MUTANTS = [
    {
        id: "milp-removed",
        description: "optimal never considers the MILP's placements (only the baselines' and CPU-only)",
        file: "electron/engine/planner/strategies/optimalStrategy.ts",
        find: "if (host != null) consider({resolved: perTensor(model, host)",
        replace: "if (host != null && host.size < 0) consider({resolved: perTensor(model, host)",
        tests: ["electron/engine/planner/optimalStrategy.test.ts"]
    },
    {
        id: "optimal-is-layer-split",
        description: "optimal returns the layer-split plan",
        file: "electron/engine/planner/planStrategy.ts",
        find: "return optimalStrategy(inputs, baselines.filter((b) => b.fits));",
        replace: "return {...await layersStrategy(inputs), strategy: \"optimal\"};",
        tests: ["electron/engine/planner/optimalStrategy.test.ts"]
    },
    {
        id: "oato-no-transfer",
        description: "OATO's transfer delay T′ (neighbourTransfer) is always zero",
        file: "electron/engine/planner/strategies/oatoStrategy.ts",
        find: "return ((onGpu(i - 1, gpu) ? 0 : 1) + (onGpu(i + 1, gpu) ? 0 : 1)) * cx.switchUs;",
        replace: "return 0 * cx.switchUs;",
        tests: ["electron/engine/planner/optimalStrategy.test.ts"]
    },
    {
        id: "no-decode-hop-cost",
        description: "the cost model's per-token hop term is removed",
        file: "electron/engine/planner/costModel.ts",
        find: "tpot += dHops * cx.switchUs;",
        replace: "",
        tests: ["electron/engine/planner/costModel.test.ts"]
    },
    {
        id: "no-prefill-hop-cost",
        description: "the cost model's prefill hop term (switch + activation copy) is removed",
        file: "electron/engine/planner/costModel.ts",
        find: "ttft += hops(nodeDevices(cx, p, b)) * hopUs;",
        replace: "void hopUs;",
        tests: ["electron/engine/planner/costModel.test.ts"]
    },
    {
        id: "formula-attention-10x",
        description: "attention without a profiled point (its reads and flops) priced 10× slower",
        file: "electron/engine/planner/costModel.ts",
        find: "return recurrent + work.bytes / readRate + work.flops / flopRate;",
        replace: "return recurrent + 10 * (work.bytes / readRate + work.flops / flopRate);",
        tests: ["electron/engine/planner/costModel.test.ts"]
    },
    {
        id: "profiled-attention-ignored",
        description: "the profile's attention timings (flash attention on and off) are ignored",
        file: "electron/engine/planner/costModel.ts",
        find: "if (measured != null) return recurrent + measured * scale;",
        replace: "if (measured != null && measured < 0) return recurrent + measured * scale;",
        tests: ["electron/engine/planner/costModel.test.ts"]
    },
    {
        id: "op-offload-ignored",
        description: "the cost model offloads every large prompt micro-batch to the GPU whatever op offload says",
        file: "electron/engine/planner/costModel.ts",
        find: "const offloaded = cx.opOffload && b >= cx.offloadMinBatch;",
        replace: "const offloaded = cx.gpuDevice != null && b >= cx.offloadMinBatch;",
        tests: ["electron/engine/planner/costModel.test.ts"]
    },
    {
        id: "cpu-only-always-fits",
        description: "a CPU-only placement counts as fitting whatever llama.cpp reserves on the GPU for it (the broken budget promise)",
        file: "electron/engine/planner/strategies/StrategyResult.ts",
        find: "const fits = prediction.vram.total <= inputs.budgetBytes;",
        replace: "const fits = resolved.onGpu.size === 0 || prediction.vram.total <= inputs.budgetBytes;",
        tests: ["electron/engine/planner/explainPlan.test.ts", "electron/engine/planner/planner.test.ts"]
    },
    {
        id: "near-tie-decides",
        description: "a lead of any size decides the plan (a 0.2% faster 2048-token micro-batch beats 512; measured 27% slower)",
        file: "electron/engine/planner/strategies/optimalStrategy.ts",
        find: "const ties = candidates.filter((x) => x.ms <= fastestMs * (1 + NEAR_TIE_SHARE));",
        replace: "const ties = candidates.filter((x) => x.ms <= fastestMs);",
        tests: ["electron/engine/planner/planner.test.ts"]
    },
    {
        id: "expert-timings-kept-across-threads",
        description: "another thread count keeps the base profile's CPU expert matmuls (1 thread priced at 2 threads' MoE timings)",
        file: "electron/engine/profiler/profileAtThreads.ts",
        find: "? {expertMatmuls: [...(cpu.expertMatmuls ?? []), ...(base.expertMatmuls ?? []).filter((m) => m.device !== CPU_DEVICE)]} : {}),",
        replace: "? {expertMatmuls: [...(base.expertMatmuls ?? [])]} : {}),",
        tests: ["electron/engine/profiler/profileMachine.test.ts"]
    },
    {
        id: "memory-kv-scratch-swapped",
        description: "the memory report shows the KV cache as scratch and the scratch as KV cache",
        file: "electron/engine/runtime/memoryReport.ts",
        find: "kvCacheBytes: entry.context,\n            scratchBytes: entry.compute",
        replace: "kvCacheBytes: entry.compute,\n            scratchBytes: entry.context",
        tests: ["electron/engine/runtime/memoryReport.test.ts", "electron/engine/runtime/PlacedModel.cpu.test.ts"]
    },
    {
        id: "conversations-non-atomic",
        description: "conversations are written in place instead of temp file + rename",
        file: "electron/host/conversations/ConversationStore.ts",
        find: "const temp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}${TEMP_SUFFIX}`;",
        replace: "const temp = file;",
        tests: ["electron/host/conversations/ConversationStore.test.ts"]
    },
    {
        id: "conversations-no-fsync",
        description: "the temp file is not fsynced before the rename",
        file: "electron/host/conversations/ConversationStore.ts",
        find: "await handle.writeFile(data, \"utf8\");\n        await handle.sync();",
        replace: "await handle.writeFile(data, \"utf8\");",
        tests: ["electron/host/conversations/ConversationStore.test.ts"]
    },
    {
        id: "conversations-no-dir-fsync",
        description: "the directory is not fsynced after the rename",
        file: "electron/host/conversations/ConversationStore.ts",
        find: "await syncDirectory(path.dirname(file), io);",
        replace: "",
        tests: ["electron/host/conversations/ConversationStore.test.ts"]
    },
    {
        id: "stale-guard-restart",
        description: "restartEngine applies its answer even after a newer engine.state event",
        file: "renderer/src/actions/engineActions.ts",
        find: "if (useEngineStore.getState().engineVersion === version)",
        replace: "if (version >= 0)",
        tests: ["renderer/src/actions/engineActions.test.ts"]
    },
    {
        id: "stale-guard-bootstrap",
        description: "bootstrap applies its engine.state answer even after a newer event",
        file: "renderer/src/actions/bootstrap.ts",
        find: "if (useEngineStore.getState().engineVersion === version)",
        replace: "if (version >= 0)",
        tests: ["renderer/src/actions/engineActions.test.ts"]
    },
    {
        id: "stale-guard-counter",
        description: "engine states no longer bump the version the guards compare",
        file: "renderer/src/stores/engineStore.ts",
        find: "engineVersion: store.engineVersion + 1",
        replace: "engineVersion: store.engineVersion",
        tests: ["renderer/src/actions/engineActions.test.ts", "renderer/src/stores/engineStore.test.ts"]
    },
    {
        id: "device-tests-skip-in-ci",
        description: "a missing device or build skips the tests even where they are required",
        file: "electron/engine/testing/probeEngine.ts",
        find: "if (devicesRequired() || (gpu === \"cpu\" && error instanceof UnpatchedBinaryError))",
        replace: "if (gpu === \"none\")",
        tests: ["electron/engine/testing/probeEngine.test.ts"]
        },
    {
        id: "web-url-unguarded",
        description: "a request target that new URL rejects (GET //[x) is parsed unguarded, so it fails as a server error",
        file: "electron/web/serveWeb.ts",
        find: "const url = parseRequestTarget(request.url, hostHeader);",
        replace: "const url = new URL(request.url ?? \"/\", `http://${hostHeader}`);",
        tests: ["electron/web/serveWeb.test.ts"]
    },
    {
        id: "limits-unbounded",
        description: "numbers are checked for type only: 2^31-token contexts, 100000 threads and negative max tokens get through",
        file: "electron/contract/limits.ts",
        find: "return (limit.minExclusive === true ? value > limit.min : value >= limit.min) && value <= max;",
        replace: "return max === max;",
        tests: ["electron/host/checkRequest.test.ts", "electron/cli/main.test.ts"]
    },
    {
        id: "any-model-path",
        description: "web mode opens any path a request names (an oracle for files outside the models folder)",
        file: "electron/host/model/ModelAccess.ts",
        find: "if (this.options.anyPath === true || this.approved.has(candidate))",
        replace: "if (this.options.anyPath !== true || this.approved.has(candidate))",
        tests: ["electron/host/model/ModelAccess.test.ts"]
    },
    {
        id: "cli-output-raw",
        description: "the CLI prints model metadata with its terminal escape sequences",
        file: "electron/cli/main.ts",
        find: "const io: CliIo = {out: (line) => rawIo.out(terminalSafe(line)), err: (line) => rawIo.err(terminalSafe(line))};",
        replace: "const io: CliIo = {out: (line) => rawIo.out(line), err: (line) => rawIo.err(line)};",
        tests: ["electron/cli/main.test.ts"]
    },
    {
        id: "chat-token-ids-stale",
        description: "chat --json reports the prompt's token ids as the reply's, so the corpus compares the wrong tokens with stock llama.cpp",
        file: "electron/engine/runtime/streamChatReply.ts",
        find: "tokenIds: {prompt: promptTokens.map(Number), reply: replyTokenIds}",
        replace: "tokenIds: {prompt: promptTokens.map(Number), reply: promptTokens.map(Number).slice(0, replyTokenIds.length + 1)}",
        tests: ["electron/cli/main.test.ts"]
    },
    {
        id: "corpus-placement-one-sided",
        description: "the corpus's forced mixed placement puts every layer tensor on the device, so nothing runs split",
        file: "electron/engine/testing/archCorpus/corpusPlacement.ts",
        find: "return firstHalf.has(tensor.layer) === FFN_TENSOR.test(tensor.name);",
        replace: "return firstHalf.has(tensor.layer) || !firstHalf.has(tensor.layer);",
        tests: ["electron/engine/testing/archCorpus/corpusPlacement.test.ts"]
    },
    {
        id: "pull-no-sha256",
        description: "tensorwise pull keeps a download whose sha256 differs from the repository's",
        file: "electron/engine/hub/downloadFile.ts",
        find: "if (options.sha256 != null && actual !== options.sha256) {",
        replace: "if (options.sha256 != null && actual !== options.sha256 && false) {",
        tests: ["electron/cli/commands/pullCommand.test.ts"]
    },
    {
        id: "pull-no-resume",
        description: "tensorwise pull fetches the whole file again instead of the rest (no HTTP Range)",
        file: "electron/engine/hub/downloadFile.ts",
        find: "headers: have > 0 ? {Range: `bytes=${have}-`} : {}",
        replace: "headers: {}",
        tests: ["electron/cli/commands/pullCommand.test.ts"]
    },
    {
        id: "pull-no-disk-check",
        description: "tensorwise pull starts a download the free disk cannot hold",
        file: "electron/engine/hub/downloadFile.ts",
        find: "if (bytes - have + reserve > free)",
        replace: "if (bytes - have + reserve > free && false)",
        tests: ["electron/cli/commands/pullCommand.test.ts"]
    },
    {
        id: "pull-token-any-host",
        description: "HF_TOKEN is sent to any host a URL names, not only HF_ENDPOINT's",
        file: "electron/engine/hub/pullTarget.ts",
        find: "token: sameHub ? access.token : null",
        replace: "token: access.token",
        tests: ["electron/cli/commands/pullCommand.test.ts"]
    },
    {
        id: "header-validator-unbounded",
        description: "a header fetched into a sparse file is validated against the whole file, reading the hole's zeros as header",
        file: "electron/engine/gguf/validateGguf.ts",
        find: "Math.min(fileSize, options.headerBytesAvailable ?? fileSize)",
        replace: "fileSize",
        tests: ["electron/engine/hub/hub.test.ts"]
    },
    {
        id: "library-overwrites-other-writers",
        description: "the app's model library writes its stale copy over a model tensorwise pull added meanwhile",
        file: "electron/host/model/ModelLibrary.ts",
        find: "if (this.reading == null || (mtime != null && mtime !== this.knownMtimeMs))",
        replace: "if (this.reading == null)",
        tests: ["electron/host/model/ModelLibrary.test.ts"]
    },
    {
        id: "conversation-duplicate-message-ids",
        description: "a conversation file (on disk or imported) with two messages of one id is accepted",
        file: "electron/host/conversations/checkStoredConversation.ts",
        find: "if (ids.has(messageId))",
        replace: "if (ids.has(messageId) && ids.size < 0)",
        tests: ["electron/host/conversations/conversationFile.test.ts"]
    },
    {
        id: "conversation-import-any-version",
        description: "an import of a conversation file of another version is read as if it were this app's",
        file: "electron/host/conversations/importConversation.ts",
        find: "if (fields.version !== CONVERSATION_FILE_VERSION)",
        replace: "if (fields.version === \"never\")",
        tests: ["electron/host/conversations/conversationFile.test.ts"]
    },
    {
        id: "conversation-search-stale-hits",
        description: "an older search's late answer replaces the hits of the search typed after it",
        file: "renderer/src/stores/conversationListStore.ts",
        find: "set((state) => state.query === query ? {hits} : {})",
        replace: "set({hits})",
        tests: ["renderer/src/screens/Chat/components/ConversationList/ConversationList.test.tsx"]
    },
    {
        id: "web-import-body-cap",
        description: "web mode refuses a conversation import larger than 1 MiB (the cap of other requests)",
        file: "electron/web/serveWeb.ts",
        find: "name === \"conversations.import\" ? MAX_IMPORT_REQUEST_BYTES : MAX_REQUEST_BYTES",
        replace: "MAX_REQUEST_BYTES",
        tests: ["electron/web/serveWeb.test.ts"]
    },
    {
        id: "kv-cost-cache-trusts-edited-model",
        description: "a kept KV cost model edited apart from its measured points is used as it stands",
        file: "electron/serve/kv/kvCostCache.ts",
        find: "if (JSON.stringify(model) !== JSON.stringify(fitted))",
        replace: "if (model == null && fitted == null)",
        tests: ["electron/serve/kv/kvCostCache.test.ts"]
    },
    {
        id: "kv-cost-cache-any-key",
        description: "KV costs kept for another model, setting or machine are reused",
        file: "electron/serve/kv/kvCostCache.ts",
        find: "if (key !== entry.key)",
        replace: "if (typeof key !== \"string\")",
        tests: ["electron/serve/kv/kvCostCache.test.ts"]
    },
    {
        id: "server-startup-step-hidden",
        description: "the Server screen says only \"Starting…\" while the server starts, not its step and progress",
        file: "renderer/src/screens/Server/Server.tsx",
        find: "{server.status === \"starting\" && server.startup != null && <ServerStartupProgress startup={server.startup}/>}",
        replace: "",
        tests: ["renderer/src/screens/Server/Server.test.tsx"]
    },
    {
        id: "sidebar-startup-step-hidden",
        description: "the sidebar says \"Server starting…\" without the step",
        file: "renderer/src/components/Sidebar/describeActivity.ts",
        find: "lines.push(step == null ? \"Server starting…\"",
        replace: "lines.push(step != null ? \"Server starting…\"",
        tests: ["renderer/src/components/Sidebar/describeActivity.test.ts"]
    },
    {
        id: "overflow-drops-first-exchange",
        description: "truncateMiddle leaves out the oldest exchanges like a rolling window, the first question with them",
        file: "electron/engine/runtime/fitConversation.ts",
        find: "oldestFirst.slice(policy === \"truncateMiddle\" ? 1 : 0)",
        replace: "oldestFirst.slice(0)",
        tests: ["electron/engine/runtime/fitConversation.test.ts", "electron/engine/runtime/fitConversation.cpu.test.ts"]
    },
    {
        id: "overflow-no-reply-room",
        description: "a trimmed prompt fills the context to its last token, leaving the reply no room",
        file: "electron/engine/runtime/fitConversation.ts",
        find: "const fits = (length: number): boolean => length + reserve <= contextSize;",
        replace: "const fits = (length: number): boolean => length < contextSize;",
        tests: ["electron/engine/runtime/fitConversation.test.ts", "electron/engine/runtime/fitConversation.cpu.test.ts"]
    },
    {
        id: "overflow-policy-unchecked",
        description: "the host passes any contextOverflow value a client or a conversation file sends on to the engine",
        file: "electron/host/checkRequest.ts",
        find: "if (!isContextOverflowPolicy(fields.contextOverflow))",
        replace: "if (fields.contextOverflow === false)",
        tests: ["electron/host/checkRequest.test.ts", "electron/host/conversations/conversationFile.test.ts"]
    },
    {
        id: "refused-reply-saved-empty",
        description: "a reply refused or failed before its first text is saved as an empty message after the user's",
        file: "electron/host/chat/ChatStream.ts",
        find: "const kept = stoppedByUser || this.text !== \"\";",
        replace: "const kept = true;",
        tests: ["electron/host/HostService.test.ts"]
    },
    {
        id: "time-left-counts-reused",
        description: "the prompt's time left counts tokens reused from the KV cache as decoded, so it is far too short",
        file: "renderer/src/format/promptTimeLeft.ts",
        find: "const decoded = evaluated - reused;",
        replace: "const decoded = evaluated;",
        tests: ["renderer/src/format/promptTimeLeft.test.ts"]
    },
    {
        id: "slow-plan-advice-from-current-settings",
        description: "the slow-plan warning treats an option the user already took as not taken (no Auto-offload again offered)",
        file: "renderer/src/screens/Offload/components/SlowPlanWarning/slowPlanAdvice.ts",
        find: "return advice.options.filter((option) => leftToPlanner(option, settings));",
        replace: "return [];",
        tests: ["renderer/src/screens/Offload/components/SlowPlanWarning/slowPlanAdvice.test.ts"]
    }
];
