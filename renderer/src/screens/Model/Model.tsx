import {useModelStore} from "../../stores/modelStore";
import {ProgressBar} from "../../components/ProgressBar/ProgressBar";
import {ModelCard} from "./components/ModelCard/ModelCard";
import {ModelOpener} from "./components/ModelOpener/ModelOpener";
import {TensorTable} from "./components/TensorTable/TensorTable";
import "./Model.css";

export function Model() {
    const inspection = useModelStore((state) => state.inspection);
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
                    <div className="error-box" data-testid="model-error" data-code={inspection.code}>
                        <strong>This file cannot be opened.</strong>{"\n"}{inspection.message}
                        <div className="faint model-error-path">{inspection.path}</div>
                    </div>
                )}
                {inspection.status === "ready" && (
                    <>
                        <ModelCard card={inspection.card}/>
                        <TensorTable tensors={inspection.card.tensors}/>
                    </>
                )}
            </div>
        </div>
    );
}
