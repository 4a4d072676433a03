/** The report's inline stylesheet (no web fonts, no external references). */
export const REPORT_CSS = `
:root{--fg:#1d2330;--muted:#6b7280;--line:#e5e7eb;--bg:#f7f8fa;--card:#fff;--win:#e3f5ea;--win-fg:#146c3c;--loss:#fde8e8;--loss-fg:#a61b1b;--tie:#fff6db;--tie-fg:#7a5b00}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1480px;margin:0 auto;padding:24px 28px 40px}
h1{font-size:22px;margin:0 0 10px;display:flex;align-items:center;gap:12px}h2{font-size:17px;margin:30px 0 10px}h3{font-size:14px;margin:18px 0 6px;color:#374151}
h2 small,h1 small{font-weight:400;color:var(--muted);font-size:13px}
header{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 20px}
dl{display:grid;grid-template-columns:90px 1fr;gap:4px 12px;margin:0}dt{color:var(--muted)}dd{margin:0}
.badge{font-size:12px;font-weight:600;padding:3px 9px;border-radius:999px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:14px}
.chart{background:var(--card);border:1px solid var(--line);border-radius:10px;width:100%;height:auto}
.chart-title{font-size:13px;font-weight:600;fill:var(--fg)}.tick{font-size:10.5px;fill:var(--muted)}.axis-label{font-size:11.5px;fill:#374151}
.legend{font-size:11px;fill:var(--fg)}.grid{stroke:#eef0f3}.frame{fill:none;stroke:#cfd4dc}.chart-empty{fill:var(--muted)}
table{border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px;font-variant-numeric:tabular-nums}
th,td{padding:5px 9px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
th{background:#f1f3f6;font-weight:600;font-size:12px}th span{font-weight:400;color:var(--muted)}
td:first-child,td:nth-child(2),th:first-child,th:nth-child(2){text-align:left}
.runs td,.runs th{text-align:left}.win{background:var(--win);color:var(--win-fg)}.loss{background:var(--loss);color:var(--loss-fg)}.tie{background:var(--tie);color:var(--tie-fg)}
.na,.muted{color:var(--muted)}.dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:6px}
.scroll{overflow-x:auto}.load{margin-bottom:6px}.mem{color:#374151;font-size:12px}
details code{display:block;white-space:pre-wrap;word-break:break-all;font-size:11.5px;background:#f3f4f6;padding:6px 8px;border-radius:6px;margin:4px 0}
ul.targets{margin:0 0 10px;padding-left:20px;color:#374151;font-size:13px}.strategies td{text-align:left}
summary{cursor:pointer;color:#2f6fde;font-size:12px}footer{margin-top:28px;color:var(--muted);font-size:12px}
`;
