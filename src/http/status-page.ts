/**
 * GET /: the status page, rendered on the server into one self-contained HTML document (inline
 * CSS, inline SVG charts, one inline script that only notes when the page was rendered). It names
 * no external URL, so it works offline; its Content-Security-Policy (statusPagePolicy) forbids
 * loading anything from anywhere. Readable on a phone: under 720 px the table becomes one card per
 * filter. It takes the same `limit`, `offset` and `sort` as GET /filters.
 */
import type { FilterSort, Listing, ListedFilter, ListingQuery } from './filters-json.js'
import type { Figure } from './server-figures.js'
import { human } from '../commands/admin/info.js'
import { rateChart } from './status-chart.js'

/** Nothing may be fetched; inline style and script only (the page has no other kind). */
export const STATUS_PAGE_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

const SORT_LABELS: Record<FilterSort, string> = { name: 'name', bytes: 'largest', estimatedErrorRate: 'worst rate' }

const STYLE = `
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d7dce2;--bg:#fff;--warn:#b35c00;--warn-bg:#fff3e0;--bad:#b3261e;--bad-bg:#fdecea;--ok:#1f7a3d;--accent:#2457a6}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header,main{padding:12px 16px;max-width:1200px;margin:0 auto}
h1{font-size:20px;margin:0 0 8px}
h2{font-size:16px;margin:16px 0 8px}
dl.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:6px 16px;margin:0}
dl.figures div{border-left:3px solid var(--line);padding-left:8px}
dl.figures dt{color:var(--muted);font-size:12px}
dl.figures dd{margin:0;font-variant-numeric:tabular-nums}
dl.figures .bad{border-color:var(--bad);color:var(--bad)}
nav{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:8px 0}
nav a{color:var(--accent)}
nav .current{font-weight:600}
table{border-collapse:collapse;width:100%}
th,td{text-align:right;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:middle;font-variant-numeric:tabular-nums}
th{font-size:12px;color:var(--muted);font-weight:600}
th.name,th.type,td.name,td.type{text-align:left}
td.name{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all;max-width:260px}
tr.near-full{background:var(--warn-bg)}
tr.over-target{background:var(--bad-bg)}
.verdict{display:inline-block;border-radius:9px;padding:0 8px;font-size:12px;white-space:nowrap}
.verdict.ok{color:var(--ok);border:1px solid var(--ok)}
.verdict.near-full{color:#fff;background:var(--warn)}
.verdict.over-target{color:#fff;background:var(--bad)}
.rate.over{color:var(--bad);font-weight:600}
.bar{display:inline-block;width:60px;height:8px;background:var(--line);border-radius:4px;overflow:hidden;vertical-align:middle;margin-right:6px}
.bar i{display:block;height:100%;background:var(--accent)}
svg.chart{display:block;margin-left:auto}
svg.chart .curve{fill:none;stroke:var(--accent);stroke-width:1.5}
svg.chart .target{stroke:var(--muted);stroke-dasharray:3 3;stroke-width:1}
svg.chart .now{fill:var(--fg)}
svg.chart.over .now{fill:var(--bad)}
.empty{color:var(--muted)}
@media (max-width:720px){
 thead{display:none}
 table,tbody,tr,td{display:block;width:100%}
 tr{border:1px solid var(--line);border-radius:8px;margin:0 0 10px;padding:6px 8px}
 td{border:0;display:flex;justify-content:space-between;gap:12px;padding:3px 0;text-align:right;max-width:none}
 td::before{content:attr(data-label);color:var(--muted);text-align:left}
 td.name{font-weight:600;max-width:none}
 svg.chart{width:100%;height:auto;max-width:320px}
}
`

/** Text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** A rate as a percentage with three significant digits ("1.00%", "0.0123%"); tiny ones as "<0.0001%". */
function percent(rate: number): string {
  if (rate === 0) return '0%'
  if (rate < 1e-6) return '<0.0001%'
  return `${(rate * 100).toPrecision(3)}%`
}

/** A count with thousands separated by commas. */
function count(value: number): string {
  // Not toLocaleString: its ICU formatter costs some 50 µs a call.
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

function verdictClass(verdict: string): string {
  return verdict.replace(/ /g, '-')
}

/** A page link: the same listing with other parameters. */
function pageHref(query: ListingQuery, change: Partial<ListingQuery>): string {
  const next = { ...query, ...change }
  return `/?sort=${next.sort}&limit=${next.limit}&offset=${next.offset}`
}

/** One table cell, labelled for the phone layout (the label beside one span of content). */
function cell(label: string, content: string, className = ''): string {
  return `<td${className === '' ? '' : ` class="${className}"`} data-label="${label}"><span>${content}</span></td>`
}

/** One filter's row. */
function filterRowHtml(listed: ListedFilter, showTtl: boolean): string {
  const row = listed.row
  const over = row.verdict === 'over target'
  const fill = Math.min(100, row.fillRatio * 100)
  const filter = listed.filter
  // A Cuckoo filter's rate follows its sub-filters' loads, not a curve of items: no chart.
  const chart =
    'layers' in filter
      ? rateChart({
          layers: filter.layers,
          items: row.items,
          capacity: row.capacity,
          estimatedErrorRate: row.estimatedErrorRate,
          errorRate: row.errorRate,
          over,
        })
      : '—'
  const left = row.itemsLeft < 0 ? 'scales' : `${count(row.itemsLeft)} left`
  const cells = [
    cell('name', escapeHtml(row.name), 'name'),
    cell('type', escapeHtml(row.type), 'type'),
    cell('items / capacity', `${count(row.items)} / ${count(row.capacity)}<br><small>${left}</small>`),
    cell('layers', String(row.layers)),
    cell('bytes', human(row.bytes)),
    ...(showTtl ? [cell('TTL', row.ttl < 0 ? '—' : `${row.ttl}s`)] : []),
    cell('fill', `<span class="bar"><i style="width:${fill.toFixed(1)}%"></i></span>${percent(row.fillRatio)}`),
    cell(
      'estimated / target rate',
      `<span class="rate${over ? ' over' : ''}">${percent(row.estimatedErrorRate)}</span> / ${percent(row.errorRate)}`,
    ),
    cell('status', `<span class="verdict ${verdictClass(row.verdict)}">${row.verdict}</span>`),
    cell('rate vs items', chart),
  ]
  return `<tr class="filter ${verdictClass(row.verdict)}" data-verdict="${row.verdict}" data-name="${escapeHtml(row.name)}">${cells.join('')}</tr>`
}

/** Sort links and previous / next page links. */
function navigation(query: ListingQuery, total: number, shown: number): string {
  const sorts = (Object.keys(SORT_LABELS) as FilterSort[]).map((sort) =>
    sort === query.sort
      ? `<span class="current">${SORT_LABELS[sort]}</span>`
      : `<a href="${pageHref(query, { sort, offset: 0 })}">${SORT_LABELS[sort]}</a>`,
  )
  const first = total === 0 ? 0 : Math.min(query.offset + 1, total)
  const last = query.offset + shown
  const links: string[] = []
  if (query.offset > 0)
    links.push(
      `<a rel="prev" href="${pageHref(query, { offset: Math.max(0, query.offset - query.limit) })}">previous</a>`,
    )
  if (last < total)
    links.push(`<a rel="next" href="${pageHref(query, { offset: query.offset + query.limit })}">next</a>`)
  return `<nav><span>sort: ${sorts.join(' · ')}</span><span id="range">${first}–${last} of ${total}</span>${links.join(' ')}</nav>`
}

/** The filters section: navigation and the table (a TTL column once any listed filter expires). */
function filtersSection(listing: Listing, query: ListingQuery): string {
  if (listing.total === 0) return `<h2>Filters</h2><p class="empty">No filters yet.</p>`
  const showTtl = listing.filters.some((listed) => listed.row.ttl >= 0)
  const headings = [
    'name',
    'type',
    'items / capacity',
    'layers',
    'bytes',
    ...(showTtl ? ['TTL'] : []),
    'fill',
    'estimated / target rate',
    'status',
    'rate vs items',
  ]
  const rows = listing.filters.map((listed) => filterRowHtml(listed, showTtl)).join('\n')
  const nav = navigation(query, listing.total, listing.filters.length)
  return (
    `<h2>Filters</h2>${nav}<table id="filters"><thead><tr>${headings.map((h) => `<th class="${h.split(' ')[0]}">${h}</th>`).join('')}</tr></thead>` +
    `<tbody>\n${rows}\n</tbody></table>${nav}`
  )
}

/** The whole page. */
export function statusPage(figures: readonly Figure[], listing: Listing, query: ListingQuery): string {
  const dl = figures
    .map(
      (figure) =>
        `<div${figure.bad === true ? ' class="bad"' : ''}><dt>${escapeHtml(figure.label)}</dt><dd>${escapeHtml(figure.value)}</dd></div>`,
    )
    .join('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>bfs status</title><style>${STYLE}</style></head>
<body><header><h1>bfs status</h1><dl class="figures" id="server">${dl}</dl></header>
<main>${filtersSection(listing, query)}</main>
<script>document.documentElement.dataset.renderedMs = String(Math.round(performance.now()))</script>
</body></html>
`
}
