import {useCallback, useLayoutEffect, useRef, type RefObject} from "react";

/** How close to the bottom (px) still counts as "at the bottom": a reader who scrolled up less than this is followed. */
export const FOLLOW_SLACK_PX = 48;

/** Whether a scroll container shows its last pixels (within {@link FOLLOW_SLACK_PX}). */
export function isAtBottom(element: {scrollTop: number; scrollHeight: number; clientHeight: number}): boolean {
    return element.scrollHeight - element.scrollTop - element.clientHeight <= FOLLOW_SLACK_PX;
}

/**
 * Keeps a scroll container pinned to its bottom while its content grows (new tokens), unless the reader scrolled up;
 * scrolling back to the bottom resumes following. `resetKey` (the conversation shown) jumps to the bottom and follows
 * again. Only the container scrolls: unlike `scrollIntoView`, nothing outside it moves.
 */
export function useFollowTail(container: RefObject<HTMLElement | null>, contentKey: unknown, resetKey: unknown): {onScroll: () => void} {
    const following = useRef(true);
    const onScroll = useCallback(() => {
        const element = container.current;
        if (element != null)
            following.current = isAtBottom(element);
    }, [container]);
    useLayoutEffect(() => {
        following.current = true;
    }, [resetKey]);
    useLayoutEffect(() => {
        const element = container.current;
        if (element != null && following.current)
            element.scrollTop = element.scrollHeight;
    }, [container, contentKey, resetKey]);
    return {onScroll};
}
