import {Icon} from "../../../../components/Icon/Icon";
import {useRef, useState} from "react";
import {inspectPath, openModelDialog, openModelFile} from "../../../../actions/modelActions";
import {makeDemoModel} from "../../../../actions/hubActions";
import {getTransport} from "../../../../transport/getTransport";
import {useUiStore} from "../../../../stores/uiStore";
import "./ModelOpener.css";

/** Drop zone + file picker (native dialog in Electron, upload in web mode) + a typed path for huge local files. */
export function ModelOpener({compact}: {compact: boolean}) {
    const input = useRef<HTMLInputElement>(null);
    const [path, setPath] = useState("");
    const transport = getTransport();
    const pick = () => {
        if (transport.hasNativeDialog)
            void openModelDialog();
        else
            input.current?.click();
    };
    return (
        <div className={`opener panel ${compact ? "compact" : ""}`} data-testid="model-opener">
            {!compact && (
                <div className="opener-drop">
                    <div className="opener-icon"><Icon name="drop" size={32}/></div>
                    <div>
                        <h2>Drop a .gguf file anywhere on this window</h2>
                        <p className="muted">
                            {transport.kind === "web"
                                ? "In web mode a dropped file is copied into the app's models folder. For very large models, type the path instead."
                                : "The file is read in place; nothing is copied."}
                        </p>
                    </div>
                </div>
            )}
            <div className="opener-actions">
                <button className="button" data-testid="choose-file" onClick={pick}>Choose file…</button>
                {!compact && <button className="button" data-testid="opener-get-model" onClick={() => useUiStore.getState().show("get-model")}>Get a model…</button>}
                {!compact && <button className="button" data-testid="opener-demo-model" title="A tiny model with random weights: it answers gibberish, but every screen works with it"
                    onClick={() => void makeDemoModel()}>Make a demo model (random weights)</button>}
                <input ref={input} type="file" accept=".gguf" hidden data-testid="file-input"
                    onChange={(event) => {
                        const file = event.target.files?.[0];
                        if (file != null)
                            void openModelFile(file);
                        event.target.value = "";
                    }}/>
                <span className="faint">or</span>
                <form className="opener-path" onSubmit={(event) => {
                    event.preventDefault();
                    void inspectPath(path);
                }}>
                    <input className="input mono" data-testid="model-path" placeholder="/path/to/model.gguf on this machine" value={path}
                        onChange={(event) => setPath(event.target.value)}/>
                    <button className="button" type="submit" data-testid="open-path" disabled={path.trim() === ""}>Open</button>
                </form>
            </div>
        </div>
    );
}
