// The report's case browser: sorts, filters, searches and pages the cases the report model computed
// (the JSON in #cb-data), and lays out each case's claim-by-claim view. Text goes in through textContent
// only, so nothing in a case can become markup. A link to #c-<case id> shows that case; #card-<metric>
// opens that metric's card.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("cb-data").textContent);
  const M = data.metrics, PER = 50;
  const st = {q: "", metric: "", min: "", max: "", spread: "", status: "", tag: "", divergent: false,
              sort: "pos", dir: 1, page: 0, open: new Map()};
  const $ = (id) => document.getElementById(id);
  window.caseBrowser = {st, shown: () => view().map((c) => c.id)};

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }

  function keep(c) {
    if (st.q) {
      const q = st.q.toLowerCase();
      const hay = [c.id, c.question || "", c.answer || "", c.tags.join(" ")].join("\n").toLowerCase();
      if (!hay.includes(q)) return false;
    }
    if (st.tag && !c.tags.includes(st.tag)) return false;
    if (st.divergent && !c.divergent) return false;
    if (st.spread !== "" && !(c.spread !== null && c.spread >= +st.spread)) return false;
    const cells = st.metric === "" ? c.scores : [c.scores[+st.metric]];
    if (st.status && !cells.some((s) => s.status === st.status)) return false;
    if (st.min !== "" || st.max !== "") {
      const ok = cells.some((s) => s.status === "scored" && (st.min === "" || s.v >= +st.min) && (st.max === "" || s.v <= +st.max));
      if (!ok) return false;
    }
    return true;
  }

  function key(c) {
    if (st.sort === "pos") return c.pos;
    if (st.sort === "id") return c.id.toLowerCase();
    if (st.sort === "spread") return c.spread === null ? null : c.spread;
    if (st.sort === "tags") return c.tags.join(",");
    const s = c.scores[+st.sort];
    return s.status === "scored" ? s.v : null;
  }

  function view() {
    const rows = data.cases.filter(keep);
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === y) return a.pos - b.pos;
      if (x === null) return 1;          // cells that are not scores sort last, either way
      if (y === null) return -1;
      return (x < y ? -1 : 1) * st.dir;
    });
    return rows;
  }

  function shade(v) { return data.palette[Math.round(100 * Math.max(0, Math.min(1, v)))]; }

  function isOpen(c) { return st.open.has(c.id) ? st.open.get(c.id) : c.divergent && data.open_divergent !== false; }

  function detail(c) {
    const box = el("div", {class: "cb-detail-box"});
    if (c.detail === false) {
      box.append(el("p", {class: "muted"}, "This page keeps the texts and claim-by-claim views of " + data.detail_cases +
        " cases (the divergent ones first); this one's are in the run store: harness export RUN --format jsonl."));
      return box;
    }
    if (c.question === null) {
      box.append(el("p", {class: "muted"}, "The case text is not available (see the note at the top)."));
    } else {
      box.append(el("p", {}, el("b", {}, "Question: "), c.question), el("p", {}, el("b", {}, "Answer:")),
                 el("blockquote", {}, c.answer || "(empty)"));
      const ctx = el("details", {}, el("summary", {}, "Contexts (" + c.contexts.length + ")"));
      c.contexts.forEach((x) => ctx.append(el("p", {}, el("b", {}, "[" + x.id + "]")), el("blockquote", {}, x.text)));
      box.append(ctx);
    }
    const shown = M.map((m, i) => i).filter((i) => c.rows.some((r) => r.marks[i].length));
    const labelled = c.rows.some((r) => r.label);
    const head = el("tr", {}, el("th", {}, "row"), el("th", {}, "answer text"), ...(labelled ? [el("th", {}, "annotation")] : []),
                    ...shown.map((i) => el("th", {title: M[i].display}, M[i].short)));
    const body = c.rows.map((r) => el("tr", {}, el("td", {class: "small"}, r.kind), el("td", {}, r.text),
      ...(labelled ? [el("td", {}, r.label || "\u2013")] : []),
      ...shown.map((i) => {
        const ms = r.marks[i];
        const vs = [...new Set(ms.map((k) => k.verdict))];
        const td = el("td", {class: "small " + (ms.length ? (vs.length === 1 ? "v-" + vs[0] : "v-ambiguous") : "")});
        ms.forEach((k, j) => { if (j) td.append(el("br")); td.append(k.text); });
        return td;
      })));
    box.append(c.rows.length ? el("div", {class: "scroll"}, el("table", {class: "align"}, el("thead", {}, head), el("tbody", {}, ...body)))
                             : el("p", {class: "muted small"}, "No claim-by-claim verdicts on this case."));
    return box;
  }

  function render() {
    const rows = view(), pages = Math.max(1, Math.ceil(rows.length / PER));
    st.page = Math.min(st.page, pages - 1);
    const tbody = $("cb-body");
    tbody.replaceChildren();
    for (const c of rows.slice(st.page * PER, (st.page + 1) * PER)) {
      const open = isOpen(c);
      const btn = el("button", {class: "cb-toggle", "aria-expanded": String(open), title: "claim-by-claim view",
                                onclick: () => { st.open.set(c.id, !open); render(); }}, open ? "\u25be" : "\u25b8");
      const tr = el("tr", {class: "cb-row" + (c.divergent ? " cb-divergent" : "")},
        el("th", {}, btn, " ", c.id), el("td", {class: "small"}, c.tags.join(", ")),
        el("td", {class: "num"}, c.spread === null ? "\u2013" : c.spread.toFixed(2)),
        ...c.scores.map((s) => s.status === "scored"
          ? el("td", {style: shade(s.v), title: s.flags.join(", ")}, s.label)
          : el("td", {class: "s-" + s.status, title: s.reason}, s.label)));
      tr.id = "c-" + c.id;
      tbody.append(tr);
      if (open) tbody.append(el("tr", {class: "cb-detail"}, el("td", {colspan: String(3 + M.length)}, detail(c))));
    }
    $("cb-count").textContent = rows.length + " of " + data.cases.length + " cases" +
      (pages > 1 ? " \u00b7 page " + (st.page + 1) + " of " + pages : "");
    $("cb-prev").disabled = st.page === 0;
    $("cb-next").disabled = st.page >= pages - 1;
    document.querySelectorAll("#cb-table th[data-sort]").forEach((th) => {
      th.setAttribute("aria-sort", th.dataset.sort === st.sort ? (st.dir > 0 ? "ascending" : "descending") : "none");
    });
  }

  function reveal(id) {
    Object.assign(st, {q: "", metric: "", min: "", max: "", spread: "", status: "", tag: "", divergent: false});
    for (const f of ["cb-q", "cb-metric", "cb-min", "cb-max", "cb-spread", "cb-status", "cb-tag"]) $(f).value = "";
    $("cb-divergent").checked = false;
    const rows = view(), at = rows.findIndex((c) => c.id === id);
    if (at < 0) return;
    st.page = Math.floor(at / PER);
    st.open.set(id, true);
    render();
    const tr = document.getElementById("c-" + id);
    tr.classList.add("cb-target");
    tr.scrollIntoView({block: "start"});
  }

  function onHash() {
    const h = decodeURIComponent(location.hash.slice(1));
    if (h.startsWith("c-")) reveal(h.slice(2));
    if (h.startsWith("card-")) { const d = document.getElementById(h); if (d) { d.open = true; d.scrollIntoView({block: "start"}); } }
  }

  const bind = (id, field, ev) => $(id).addEventListener(ev || "input", (e) => {
    st[field] = e.target.type === "checkbox" ? e.target.checked : e.target.value; st.page = 0; render(); });
  bind("cb-q", "q"); bind("cb-metric", "metric", "change"); bind("cb-min", "min"); bind("cb-max", "max");
  bind("cb-spread", "spread"); bind("cb-status", "status", "change"); bind("cb-tag", "tag", "change");
  bind("cb-divergent", "divergent", "change");
  $("cb-prev").onclick = () => { st.page -= 1; render(); };
  $("cb-next").onclick = () => { st.page += 1; render(); };
  document.querySelectorAll("#cb-table th[data-sort]").forEach((th) => th.addEventListener("click", (e) => {
    if (e.target.closest("a")) return;   // a metric's name links to its card
    const k = th.dataset.sort;
    st.dir = st.sort === k ? -st.dir : (k === "pos" || k === "id" || k === "tags" ? 1 : -1);
    st.sort = k;
    render();
  }));
  window.addEventListener("hashchange", onHash);
  render();
  if (location.hash) onHash();
})();
