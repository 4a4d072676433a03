import {useState} from "react";
import {restartEngine} from "../../actions/engineActions";
import {useEngineStore} from "../../stores/engineStore";
import {errorMessage} from "../../transport/Transport";
import "./CrashBanner.css";

/** Says what happened when the engine process died, and brings it back. The conversation stays on screen. */
export function CrashBanner() {
    const engine = useEngineStore((state) => state.engine);
    const restarting = useEngineStore((state) => state.restarting);
    const [error, setError] = useState<string | null>(null);
    const [showDetails, setShowDetails] = useState(false);
    if (engine.state !== "crashed")
        return null;
    const [headline, ...details] = engine.reason.split("\n");
    return (
        <div className="crash-banner" role="alert" data-testid="crash-banner">
            <div className="crash-banner-text">
                <strong>The engine process stopped</strong> ({headline}) at {new Date(engine.at).toLocaleTimeString()}.
                {" "}Your conversations are safe; a reply in progress was kept up to where it stopped.
                {details.length > 0 && (
                    <button className="button ghost small" onClick={() => setShowDetails(!showDetails)}>
                        {showDetails ? "Hide details" : "Details"}
                    </button>
                )}
                {showDetails && <pre className="crash-banner-details">{details.join("\n")}</pre>}
                {error != null && <div className="crash-banner-error">Restart failed: {error}</div>}
            </div>
            <button className="button primary" data-testid="restart-engine" disabled={restarting}
                onClick={() => {
                    setError(null);
                    restartEngine().catch((reason: unknown) => setError(errorMessage(reason)));
                }}>
                {restarting ? "Restarting…" : "Restart engine"}
            </button>
        </div>
    );
}
