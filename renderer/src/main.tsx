import {createRoot} from "react-dom/client";
import "uplot/dist/uPlot.min.css";
import "./styles/theme.css";
import {App} from "./App/App";
import {bootstrap} from "./actions/bootstrap";

const root = createRoot(document.getElementById("root")!);
try {
    bootstrap();
    root.render(<App/>);
} catch (error) {
    root.render(<div className="screen"><div className="error-box">{error instanceof Error ? error.message : String(error)}</div></div>);
}
