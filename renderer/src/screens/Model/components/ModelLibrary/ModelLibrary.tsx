import {forgetModel, inspectPath, loadFromLibrary, unloadModel} from "../../../../actions/modelActions";
import {ErrorNotice} from "../../../../components/ErrorNotice/ErrorNotice";
import {formatBytes, formatRelativeTime} from "../../../../format/format";
import {useEngineStore} from "../../../../stores/engineStore";
import {useLibraryStore} from "../../../../stores/libraryStore";
import {useModelStore} from "../../../../stores/modelStore";
import {usePlanStore} from "../../../../stores/planStore";
import {FolderModelList} from "./components/FolderModelList/FolderModelList";
import "./ModelLibrary.css";

/**
 * Recent models with what is loaded now: Open shows a model's card (validated, nothing in memory), Load puts it in
 * memory the way it was last loaded, Unload ejects the loaded one. One model is loaded at a time. Below them, every model
 * file in the models folders.
 */
export function ModelLibrary() {
    const models = useLibraryStore((state) => state.models);
    const failure = useLibraryStore((state) => state.failure);
    const loaded = usePlanStore((state) => state.loaded);
    const run = usePlanStore((state) => state.run);
    const engine = useEngineStore((state) => state.engine);
    const inspection = useModelStore((state) => state.inspection);
    const openedPath = inspection.status === "ready" ? inspection.card.path : null;
    const loadedPath = loaded?.card.path ?? null;
    const working = run.status === "running" || engine.state === "busy" || engine.state === "starting" || engine.state === "crashed";
    return (
        <section className="panel library" data-testid="model-library">
            <div className="library-head">
                <h2>Model library</h2>
                <div className="library-now" data-testid="loaded-now">
                    {loaded != null
                        ? <>Loaded now: <b>{loaded.card.name ?? loaded.card.fileName}</b> <span className="muted">({loaded.placement.strategy} placement)</span></>
                        : <span className="muted">No model loaded.</span>}
                    {loaded != null && (
                        <button className="button small" data-testid="unload-model" disabled={working} onClick={() => void unloadModel()}>Unload</button>
                    )}
                </div>
            </div>
            <p className="faint library-explain">
                <b>Opened</b> means the file was checked and its card is shown here; nothing is in memory yet.{" "}
                <b>Loaded</b> means it is in memory with a CPU/GPU placement, ready to chat; loading another model unloads it.
            </p>
            {failure != null && <ErrorNotice testId="library-error" title={`${failure.fileName} was not loaded.`} error={failure.error}/>}
            {models.length === 0
                ? <div className="faint">Models you open appear here.</div>
                : (
                    <ul className="library-list">
                        {models.map((model) => {
                            const isLoaded = model.path === loadedPath;
                            return (
                                <li key={model.path} className={`library-item ${isLoaded ? "loaded" : ""}`} data-testid="library-item"
                                    data-path={model.path} data-loaded={isLoaded}>
                                    <div className="library-item-main">
                                        <div className="library-item-name">
                                            <b>{model.name ?? model.fileName}</b>
                                            {isLoaded && <span className="pill library-state-loaded" data-testid="library-loaded">loaded</span>}
                                            {!isLoaded && model.path === openedPath && <span className="pill">opened</span>}
                                            {model.missing === true && <span className="pill">file missing</span>}
                                        </div>
                                        <div className="faint library-item-meta">
                                            {model.fileName} · {model.architecture} · {formatBytes(model.fileBytes)} ·{" "}
                                            {model.loadedAt != null ? `loaded ${formatRelativeTime(model.loadedAt)}` : `opened ${formatRelativeTime(model.openedAt)}`}
                                            {model.lastLoad != null && ` · Load repeats ${model.lastLoad.name === "autoOffload" ? `Auto-offload (${model.lastLoad.strategy ?? "optimal"})` : "the layer split"}`}
                                        </div>
                                    </div>
                                    <div className="library-item-actions">
                                        <button className="button small" data-testid="library-open" disabled={model.missing === true}
                                            title="Shows the model's card and tensors, without loading it" onClick={() => void inspectPath(model.path)}>Details</button>
                                        {isLoaded
                                            ? <button className="button small" data-testid="library-unload" disabled={working} onClick={() => void unloadModel()}>Unload</button>
                                            : <button className="button small primary" data-testid="library-load" disabled={working || model.missing === true}
                                                title="Loads it the way it was last loaded (see above)" onClick={() => void loadFromLibrary(model.path)}>Load</button>}
                                        <button className="button small ghost" title="Remove from the library (the file stays)" aria-label={`Forget ${model.fileName}`}
                                            onClick={() => void forgetModel(model.path)}>✕</button>
                                    </div>
                                </li>
                            );
                        })}
                    </ul>
                )}
            <FolderModelList/>
        </section>
    );
}
