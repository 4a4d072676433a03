import {inspectPath} from "../../../../../../actions/modelActions";
import {formatBytes, formatRelativeTime} from "../../../../../../format/format";
import {useLibraryStore} from "../../../../../../stores/libraryStore";

/**
 * Every model file in the models folders (the app's own, then each `--model-dir`), kept current by the host. Open
 * opens the file where it is: nothing is copied.
 */
export function FolderModelList() {
    const {models, notices} = useLibraryStore((state) => state.folders);
    return (
        <div className="library-folders" data-testid="folder-models">
            <h3>In your models folders</h3>
            {notices.map((notice) => <div key={notice} className="faint" data-testid="folder-notice">{notice}</div>)}
            {models.length === 0
                ? <div className="faint">No .gguf files in the models folders yet.</div>
                : (
                    <ul className="library-list">
                        {models.map((model) => (
                            <li key={model.path} className="library-item" data-testid="folder-model" data-path={model.path}>
                                <div className="library-item-main">
                                    <div className="library-item-name"><b>{model.fileName}</b></div>
                                    <div className="faint library-item-meta">
                                        {formatBytes(model.fileBytes)} · {model.lastUsedAt != null ? `last used ${formatRelativeTime(model.lastUsedAt)}` : "never opened"} ·{" "}
                                        <span title={model.folder}>{model.folder}</span>
                                    </div>
                                </div>
                                <div className="library-item-actions">
                                    <button className="button small" data-testid="folder-model-open" title="Shows the model's card and tensors, without loading it" onClick={() => void inspectPath(model.path)}>Details</button>
                                </div>
                            </li>
                        ))}
                    </ul>
                )}
        </div>
    );
}
