import {useState} from "react";
import {largerContextSize, leftOutNote} from "../../../../../../electron/contract/contextOverflow";
import {reloadWithContextSize} from "../../../../actions/modelActions";
import {usePlanStore} from "../../../../stores/planStore";
import "./ContextNote.css";

/**
 * A quiet note that the model did not see the whole conversation (`leftOut` earlier messages of a reply), or nothing
 * but the offer when the chat was refused; either way "Reload with a larger context" is offered while the loaded
 * context is smaller than the one the model was trained for. A refused reload is shown in the load's own words.
 */
export function ContextNote({leftOut}: {leftOut: number | null}) {
    const loaded = usePlanStore((state) => state.loaded);
    const [reloading, setReloading] = useState(false);
    const [refused, setRefused] = useState<string | null>(null);
    const larger = loaded == null ? null : largerContextSize(loaded.settings.contextSize, loaded.card.contextLength);
    if (leftOut == null && larger == null && refused == null)
        return null;
    return (
        <div className="context-note" data-testid="context-note">
            {leftOut != null && <span data-testid="left-out-note">{leftOutNote(leftOut)}</span>}
            {larger != null && (
                <button className="button ghost small" data-testid="reload-larger-context" disabled={reloading}
                    title={`The model was trained for ${loaded!.card.contextLength} tokens; ${loaded!.settings.contextSize} are loaded`}
                    onClick={() => {
                        setReloading(true);
                        setRefused(null);
                        void reloadWithContextSize(larger).then((failure) => {
                            setReloading(false);
                            setRefused(failure);
                        });
                    }}>
                    {reloading ? "Reloading…" : `Reload with a ${larger}-token context`}
                </button>
            )}
            {refused != null && <span className="context-note-refused" data-testid="reload-refused">{refused}</span>}
        </div>
    );
}
