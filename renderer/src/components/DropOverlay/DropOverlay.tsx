import {Icon} from "../Icon/Icon";
import {useUiStore} from "../../stores/uiStore";
import "./DropOverlay.css";

export function DropOverlay() {
    const dragging = useUiStore((state) => state.dragging);
    if (!dragging)
        return null;
    return (
        <div className="drop-overlay" data-testid="drop-overlay">
            <div className="drop-overlay-card">
                <div className="drop-overlay-icon"><Icon name="drop" size={44}/></div>
                <h2>Drop a .gguf model</h2>
                <p className="muted">It is validated before anything reads it.</p>
            </div>
        </div>
    );
}
