/** Small line icons drawn inline (no icon font, no emoji font needed). */
const paths = {
    chat: "M4 5h16v10H8l-4 4z",
    model: "M12 3l8 4.5v9L12 21l-8-4.5v-9zM12 12l8-4.5M12 12v9M12 12L4 7.5",
    offload: "M13 2L4 14h7l-1 8 9-12h-7z",
    memory: "M4 6h16v12H4zM8 6v12M12 6v12M16 6v12",
    dashboards: "M4 19V5M4 19h16M8 15l3-4 3 2 5-7",
    benchmark: "M12 21a8 8 0 1 0 0-16 8 8 0 0 0 0 16zM12 13V9M10 2h4M18.5 6.5l1.5-1.5",
    server: "M4 4h16v6H4zM4 14h16v6H4zM8 7h.01M8 17h.01",
    tools: "M14.5 6.5a4 4 0 0 0-5.4 5.1L4 16.7 7.3 20l5.1-5.1a4 4 0 0 0 5.1-5.4l-2.4 2.4-2.4-.6-.6-2.4z",
    drop: "M12 4v11M7 10l5 5 5-5M5 20h14",
    "get-model": "M11 4a7 7 0 1 0 0 14 7 7 0 0 0 0-14zM16 16l5 5"
} as const;

export type IconName = keyof typeof paths;

export function Icon({name, size = 16}: {name: IconName; size?: number}) {
    return (
        <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={1.8}
            strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
            <path d={paths[name]}/>
        </svg>
    );
}
