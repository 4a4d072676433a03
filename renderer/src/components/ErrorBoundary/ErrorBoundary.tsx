import {Component, type ErrorInfo, type ReactNode} from "react";
import "./ErrorBoundary.css";

export type ErrorBoundaryProps = {
    children: ReactNode;
    /** What the view is, for the panel's title ("the Chat screen"). */
    what: string;
    /** Leaves the view that failed (e.g. closes the conversation it was showing); the panel then tries again. */
    onBack: () => void;
    /** The back button's label. */
    backLabel: string;
};

type State = {error: Error | null};

/**
 * One view that throws while rendering shows this panel — what failed, its message, and a way back — instead of
 * React unmounting the whole window (a blank page). React catches render errors only in class components
 * (`getDerivedStateFromError`, react.dev "Catching rendering errors with an error boundary"), hence the class.
 */
export class ErrorBoundary extends Component<ErrorBoundaryProps, State> {
    override state: State = {error: null};

    static getDerivedStateFromError(error: unknown): State {
        return {error: error instanceof Error ? error : new Error(String(error))};
    }

    override componentDidCatch(error: Error, info: ErrorInfo): void {
        console.error(`tensorwise: ${this.props.what} failed to render`, error, info.componentStack);
    }

    override render(): ReactNode {
        const {error} = this.state;
        if (error == null)
            return this.props.children;
        return (
            <div className="error-boundary error-box" role="alert" data-testid="view-error">
                <strong>{this.props.what} could not be shown.</strong>{" "}
                <span data-testid="view-error-message">{error.message}</span>
                <div className="error-boundary-actions">
                    <button className="button primary" data-testid="view-error-back" onClick={() => {
                        this.props.onBack();
                        this.setState({error: null});
                    }}>{this.props.backLabel}</button>
                    <button className="button" data-testid="view-error-retry" onClick={() => this.setState({error: null})}>Try again</button>
                </div>
            </div>
        );
    }
}
