import {useModelStore} from "../../stores/modelStore";
import {usePlanStore} from "../../stores/planStore";
import {ErrorNotice} from "../../components/ErrorNotice/ErrorNotice";
import {ProgressBar} from "../../components/ProgressBar/ProgressBar";
import {ModelCard} from "./components/ModelCard/ModelCard";
import {ModelLibrary} from "./components/ModelLibrary/ModelLibrary";
import {ModelOpener} from "./components/ModelOpener/ModelOpener";
import {RpcServers} from "./components/RpcServers/RpcServers";
import {TensorTable} from "./components/TensorTable/TensorTable";

export function Model() {
    const inspection = useModelStore((state) => state.inspection);
    const loaded = usePlanStore((state) => state.loaded);
    return (
        <div className="screen model-screen">
            <div className="screen-header">
                <div>
                    <h1>Model</h1>
                    <p>Open a GGUF file: it is validated out of process before anything else reads it.</p>
                </div>
            </div>
            <div className="stack">
                <ModelOpener compact={inspection.status === "ready"}/>
                {inspection.status === "uploading" && (
                    <div className="panel"><ProgressBar testId="upload-progress" value={inspection.progress} label={`Copying ${inspection.fileName}`} detail="into the models folder"/></div>
                )}
                {inspection.status === "inspecting" && (
                    <div className="panel"><ProgressBar testId="inspect-progress" value={null} label="Validating and inspecting" detail={inspection.path}/></div>
                )}
                {inspection.status === "failed" && (
                    <ErrorNotice testId="model-error" title={`${inspection.fileName} cannot be opened.`} error={inspection.error}
                        file={inspection.copyPath != null ? {copyPath: inspection.copyPath, name: inspection.fileName} : undefined}/>
                )}
                {inspection.status !== "ready" && loaded != null && (
                    <div className="stack" data-testid="still-loaded">
                        <div className="faint">{inspection.status === "failed" ? "Nothing changed for the loaded model:" : "Loaded now:"}</div>
                        <ModelCard card={loaded.card}/>
                    </div>
                )}
                {/* the model just opened comes first, with its one next step; the library and the rest below */}
                {inspection.status === "ready" && <ModelCard card={inspection.card}/>}
                <ModelLibrary/>
                <RpcServers/>
                {inspection.status === "ready" && <TensorTable tensors={inspection.card.tensors}/>}
            </div>
        </div>
    );
}
