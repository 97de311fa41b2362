// harness review: the page. Plain JavaScript, no library, no network beyond this server.
// Offsets the server speaks are characters (code points), as in the case format; the DOM speaks UTF-16
// units: cp2u / u2cp convert at the edges. Every action saves the answer's whole label state (PUT);
// saves are queued so they reach the server in order. Undo re-saves the state before the last change (every
// save is an append on the server, so nothing is lost, undone or not).
"use strict";
(function () {
  const LABELS = ["supported", "inference", "not_found", "contradicted"];
  const NO_EVIDENCE = ["inference", "not_found"];
  const WORDS = {supported: "supported", inference: "inference", not_found: "not found", contradicted: "contradicted"};
  const params = new URLSearchParams(location.search);
  const app = {session: null, pos: 0, data: null, st: null, active: 0, pending: 0,
               loadMs: [], saveMs: [], ready: false, lastError: null,
               history: [], lastBody: null};
  window.reviewApp = app;
  const $ = (id) => document.getElementById(id);

  function q(extra) {
    const p = new URLSearchParams();
    if (params.get("reviewer")) p.set("reviewer", params.get("reviewer"));
    if (params.get("adjudicate")) p.set("adjudicate", "1");
    for (const [k, v] of Object.entries(extra || {})) p.set(k, v);
    const s = p.toString();
    return s ? "?" + s : "";
  }

  async function api(path, opts) {
    const r = await fetch("/api/" + path + q(), opts);
    const body = await r.json().catch(() => ({error: "the server sent no JSON (" + r.status + ")"}));
    if (!r.ok) throw new Error(body.error || ("HTTP " + r.status));
    return body;
  }

  function showError(msg) {
    app.lastError = msg;
    const el = $("error");
    el.textContent = msg || "";
    el.hidden = !msg;
  }

  const cp2u = (text, cp) => Array.from(text).slice(0, cp).join("").length;
  const u2cp = (text, u) => Array.from(text.slice(0, u)).length;

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }

  function claimDone(c) {
    if (!LABELS.includes(c.label)) return false;
    if (c.label === "supported") return c.evidence.length > 0;
    return !(NO_EVIDENCE.includes(c.label) && c.evidence.length);
  }

  // ---- loading and saving --------------------------------------------------------------------
  async function start() {
    try {
      app.session = await api("session");
    } catch (e) { showError("cannot reach the review server: " + e.message); return; }
    $("reviewer").textContent = "reviewer: " + app.session.reviewer;
    const g = app.session.guidelines;
    if (g && g.text) {   // text, never HTML: a guidelines file cannot run script in the page
      $("guidelines-text").textContent = g.text;
      $("guidelines-file").textContent = "from " + g.file.split(/[\\/]/).pop();
      $("guidelines-file").title = g.file;
      $("guidelines").hidden = false;
    }
    progress(app.session.done, app.session.skipped);
    if (app.session.team && app.session.team.length) {
      $("team").textContent = "team: " + app.session.team.map((t) => t.reviewer + " " + t.done + "/" + t.assigned +
        (t.skipped ? " (" + t.skipped + " skipped)" : "")).join(" \u00b7 ");
      $("team").hidden = false;
    }
    window.addEventListener("hashchange", () => load(posFromHash()));
    await load(location.hash ? posFromHash() : app.session.first_open);
    refreshDisagreements();
  }

  function posFromHash() {
    const n = parseInt(location.hash.slice(1), 10);
    return Number.isFinite(n) ? Math.min(Math.max(n - 1, 0), app.session.total - 1) : 0;
  }

  async function load(pos) {
    const t0 = performance.now();
    try {
      app.data = await api("answer/" + pos);
    } catch (e) { showError(e.message); return; }
    app.pos = pos;
    app.caret = null;
    app.st = app.data.state;
    delete app.st.saved_at;
    app.history = [];
    app.lastBody = JSON.stringify(app.st);
    const firstOpen = app.st.claims.findIndex((c) => !claimDone(c));
    app.active = firstOpen < 0 ? 0 : firstOpen;
    if (location.hash !== "#" + (pos + 1)) history.replaceState(null, "", q() + "#" + (pos + 1));
    showError(null);
    render();
    $("saved").textContent = app.data.saved_at ? "saved " + app.data.saved_at.slice(11, 19) + " UTC" : "not labelled yet";
    app.loadMs.push(performance.now() - t0);
    app.ready = true;
  }

  let queue = Promise.resolve();
  function save(undoing) {
    const pos = app.pos, body = JSON.stringify(app.st);
    if (!undoing && body !== app.lastBody) app.history.push(app.lastBody);
    app.lastBody = body;
    $("undo").disabled = !app.history.length;
    app.pending += 1;
    $("saved").textContent = "saving\u2026";
    $("saved").classList.add("unsaved");
    queue = queue.then(async () => {
      const t0 = performance.now();
      try {
        const r = await api("answer/" + pos, {method: "PUT", headers: {"Content-Type": "application/json"}, body});
        app.saveMs.push(performance.now() - t0);
        progress(r.progress, r.skipped);
        $("saved").textContent = "saved " + r.saved_at.slice(11, 19) + " UTC";
        $("saved").classList.remove("unsaved");
        showError(null);
      } catch (e) {
        showError("not saved: " + e.message);
        $("saved").textContent = "NOT SAVED";
      } finally { app.pending -= 1; }
    });
    return queue;
  }

  function progress(done, skipped) {
    app.session.done = done;
    app.session.skipped = skipped || 0;
    $("skipped-count").textContent = skipped ? "(" + skipped + " skipped)" : "";
    const of = app.session.assigned ? app.session.assigned.length : app.session.total;
    $("progress").textContent = done + " of " + of + (app.session.assigned ? " assigned" : "") + " labelled";
    $("progressbar").max = of;
    $("progressbar").value = done;
  }

  // ---- rendering -----------------------------------------------------------------------------
  function render() {
    const d = app.data, st = app.st;
    $("position").textContent = "answer " + (app.pos + 1) + " of " + d.total;
    $("question").textContent = d.case.question;
    $("abstention").checked = st.abstention;
    $("answerable").checked = st.answerable;
    $("skip").checked = !!st.skipped;
    document.body.classList.toggle("is-skipped", !!st.skipped);
    if (document.activeElement !== $("comment")) $("comment").value = st.comment || "";
    $("undo").disabled = !app.history.length;
    renderAnswer();
    renderClaims();
    renderPassages();
    renderVerdicts();
  }

  function renderAnswer() {
    const text = app.data.case.answer, box = $("answer");
    box.replaceChildren();
    let at = 0;
    app.st.claims.forEach((c, i) => {
      const s = cp2u(text, c.start), e = cp2u(text, c.end);
      if (s > at) box.append(text.slice(at, s));
      box.append(el("span", {class: "claim" + (c.label ? " l-" + c.label : "") + (i === app.active ? " active" : ""),
                             "data-i": i, onclick: () => activate(i)}, text.slice(s, e)));
      at = e;
    });
    if (at < text.length) box.append(text.slice(at));
    if (!text) box.append(el("em", {}, "(empty answer)"));
  }

  function renderClaims() {
    const list = $("claims"), text = app.data.case.answer;
    list.replaceChildren();
    if (!app.st.claims.length) list.append(el("li", {}, "No claims: the answer asserts nothing (an abstention or an empty answer)."));
    app.st.claims.forEach((c, i) => {
      const labels = el("div", {class: "labels"}, ...LABELS.map((lab, k) => el("button", {
        class: lab + (c.label === lab ? " on" : ""), "data-label": lab, title: WORDS[lab] + " (" + (k + 1) + ")",
        onclick: (ev) => { ev.stopPropagation(); activate(i, false); setLabel(lab); }}, el("kbd", {}, String(k + 1)), " " + WORDS[lab])));
      const ev = el("div", {class: "evidence"}, c.evidence.length ? "evidence: " : "");
      c.evidence.forEach((x, j) => ev.append(el("span", {class: "chip"}, "[" + x.context_id + "] \u201c" + x.quote + "\u201d",
        el("button", {title: "remove this evidence", onclick: (e2) => { e2.stopPropagation(); c.evidence.splice(j, 1); changed(); }}, "\u00d7"))));
      if (c.label === "supported" && !c.evidence.length) ev.append(el("span", {class: "need"}, "select the text that states it in a passage"));
      if (c.label === "contradicted" && !c.evidence.length) ev.append(el("span", {class: "need"}, "optional: select the text that contradicts it"));
      const actions = el("span", {class: "actions"},
        el("button", {title: "merge with the next claim (m)", onclick: (e2) => { e2.stopPropagation(); activate(i, false); merge(); }}, "merge \u2193"));
      const li = el("li", {class: (i === app.active ? "active " : "") + (claimDone(c) ? "done" : "open"), "data-i": i,
                           onclick: () => activate(i)},
        actions, el("div", {class: "ctext"}, text.slice(cp2u(text, c.start), cp2u(text, c.end))), labels, ev);
      li.append(el("div", {class: "verdicts claim-verdicts", hidden: ""}));
      if (app.data.others) li.append(othersFor(c));
      list.append(li);
    });
  }

  function othersFor(c) {
    const box = el("div", {class: "others"});
    for (const [who, s] of Object.entries(app.data.others)) {
      const same = s.claims.find((o) => o.start === c.start && o.end === c.end);
      box.append(el("div", {}, who + ": " + (same ? (same.label ? WORDS[same.label] : "unlabelled") +
        (same.evidence.length ? " \u2014 " + same.evidence.map((x) => "\u201c" + x.quote + "\u201d").join(", ") : "") : "split differently")));
    }
    return box;
  }

  function renderPassages() {
    const box = $("passages");
    box.replaceChildren();
    for (const ctx of app.data.case.contexts) {
      const spans = [];
      app.st.claims.forEach((c, i) => c.evidence.forEach((x) => {
        if (x.context_id === ctx.id) spans.push([cp2u(ctx.text, x.start), cp2u(ctx.text, x.end), i === app.active]);
      }));
      const cuts = [...new Set([0, ctx.text.length, ...spans.flatMap((s) => [s[0], s[1]])])].sort((a, b) => a - b);
      const t = el("div", {class: "text", "data-context": ctx.id});
      for (let k = 0; k + 1 < cuts.length; k++) {
        const a = cuts[k], b = cuts[k + 1], piece = ctx.text.slice(a, b);
        const on = spans.filter((s) => s[0] <= a && b <= s[1]);
        t.append(on.length ? el("mark", {class: on.some((s) => s[2]) ? "active" : ""}, piece) : piece);
      }
      box.append(el("div", {class: "passage"}, el("div", {class: "pid"}, "passage " + ctx.id), t));
    }
  }

  function renderVerdicts() {
    const show = $("show-verdicts").checked, v = app.data.verdicts || {}, units = v.units || [];
    const line = (u) => el("div", {class: "v-" + u.verdict}, u.short + ": " + u.verdict + " (" + u.raw + ")" +
                                                              (u.start === null ? " \u2014 not located: \u201c" + u.text + "\u201d" : ""));
    document.querySelectorAll("#claims li").forEach((li) => {
      const box = li.querySelector(".claim-verdicts");
      if (!box) return;
      const c = app.st.claims[+li.dataset.i];
      const hits = units.filter((u) => u.start !== null && !["answer", "judge"].includes(u.kind) && u.start < c.end && c.start < u.end);
      box.replaceChildren(...(hits.length ? hits.map(line) : [el("div", {}, "no metric unit overlaps this claim")]));
      box.hidden = !show;
    });
    const whole = $("answer-verdicts");
    const scores = Object.entries(v.scores || {}).map(([m, s]) => s.short + " " + s.label).join(" \u00b7 ");
    whole.replaceChildren(el("div", {}, scores ? "scores: " + scores : "no run: no metric verdicts"),
      ...units.filter((u) => u.start === null || ["answer", "judge"].includes(u.kind)).map(line));
    whole.hidden = !show;
  }

  // ---- actions (each one saves) --------------------------------------------------------------
  function changed() { render(); save(); }

  function activate(i, rerender = true) {
    if (i < 0 || i >= app.st.claims.length) return;
    app.active = i;
    if (rerender) render();
  }

  function setLabel(label) {
    const c = app.st.claims[app.active];
    if (!c) return;
    c.label = label;
    if (NO_EVIDENCE.includes(label)) c.evidence = [];
    if (claimDone(c) && !(label === "supported")) {
      const next = app.st.claims.findIndex((x, k) => k > app.active && !claimDone(x));
      if (next >= 0) app.active = next;
    }
    changed();
  }

  function offsetIn(box, node, off) {
    const r = document.createRange();
    r.setStart(box, 0);
    r.setEnd(node, off);
    return r.toString().length;
  }

  function onPassageSelect() {
    const sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return;
    const box = sel.anchorNode && sel.anchorNode.parentElement && sel.anchorNode.parentElement.closest("#passages .text");
    const box2 = sel.focusNode && sel.focusNode.parentElement && sel.focusNode.parentElement.closest("#passages .text");
    if (!box || box !== box2) return;
    const c = app.st.claims[app.active];
    if (!c) { showError("this answer has no claim to attach evidence to"); return; }
    const ctx = app.data.case.contexts.find((x) => x.id === box.dataset.context);
    let a = offsetIn(box, sel.anchorNode, sel.anchorOffset), b = offsetIn(box, sel.focusNode, sel.focusOffset);
    if (a > b) [a, b] = [b, a];
    while (a < b && /\s/.test(ctx.text[a])) a++;
    while (b > a && /\s/.test(ctx.text[b - 1])) b--;
    sel.removeAllRanges();
    if (a === b) return;
    const ev = {context_id: ctx.id, start: u2cp(ctx.text, a), end: u2cp(ctx.text, b), quote: ctx.text.slice(a, b)};
    if (!c.evidence.some((x) => x.context_id === ev.context_id && x.start === ev.start && x.end === ev.end)) c.evidence.push(ev);
    if (!c.label || NO_EVIDENCE.includes(c.label)) c.label = "supported";
    changed();
  }

  function rememberCaret() {   // on mouseup in the answer, before a click re-renders it and drops the caret
    const sel = window.getSelection(), box = $("answer");
    app.caret = sel && sel.rangeCount && box.contains(sel.anchorNode)
      ? u2cp(app.data.case.answer, offsetIn(box, sel.anchorNode, sel.anchorOffset)) : null;
  }

  function split() {
    const text = app.data.case.answer, at = app.caret;
    if (at === null || at === undefined) { showError("to split: click in the answer where the claim should end, then press x"); return; }
    const i = app.st.claims.findIndex((c) => c.start < at && at < c.end);
    if (i < 0) { showError("to split: the point must be inside a claim, not at its edge"); return; }
    const c = app.st.claims[i], chars = Array.from(text);
    let end = at, start = at;
    while (end > c.start && /\s/.test(chars[end - 1])) end--;
    while (start < c.end && /\s/.test(chars[start])) start++;
    if (end <= c.start || start >= c.end) { showError("to split: the point must leave text on both sides"); return; }
    app.st.claims.splice(i, 1, {start: c.start, end: end, label: c.label, evidence: c.evidence},
                         {start: start, end: c.end, label: null, evidence: []});
    app.active = i;
    app.caret = null;
    changed();
  }

  function merge() {
    const i = app.active, a = app.st.claims[i], b = app.st.claims[i + 1];
    if (!a || !b) { showError("to merge: the active claim needs a claim after it"); return; }
    app.st.claims.splice(i, 2, {start: a.start, end: b.end, label: a.label === b.label ? a.label : null,
                                evidence: a.evidence.concat(b.evidence)});
    changed();
  }

  function undo() {
    if (!app.history.length) { showError("nothing to undo on this answer"); return; }
    app.st = JSON.parse(app.history.pop());
    $("comment").value = app.st.comment || "";
    if (app.active >= app.st.claims.length) app.active = Math.max(app.st.claims.length - 1, 0);
    render();
    save(true);
  }

  function setComment() {
    const v = $("comment").value;
    if ((app.st.comment || "") === v) return;
    if (v) app.st.comment = v; else delete app.st.comment;
    changed();
  }

  function toggleSkip() {
    if (app.st.skipped) delete app.st.skipped; else app.st.skipped = true;
    changed();
  }

  function go(delta) {
    setComment();
    const mine = app.session.assigned;
    if (mine) {   // step through the reviewer's own answers (any answer stays reachable by its #number)
      const p = delta > 0 ? mine.find((x) => x > app.pos) : [...mine].reverse().find((x) => x < app.pos);
      if (p !== undefined) location.hash = "#" + (p + 1);
      return;
    }
    const p = app.pos + delta;
    if (p < 0 || p >= app.session.total) return;
    location.hash = "#" + (p + 1);
  }

  function toggleVerdicts() { $("show-verdicts").checked = !$("show-verdicts").checked; renderVerdicts(); }

  async function refreshDisagreements() {
    if ((app.session.reviewers || []).length < 2) return;
    let k;
    try { k = await api("disagreements"); } catch (e) { return; }
    const b = $("disagreements-button");
    b.hidden = false;
    b.textContent = "disagreements: " + k.disagreements.length;
    const f = (v) => (v === null ? "undefined" : v.toFixed(2));
    $("kappa").textContent = k.reviewers.join(", ") + " \u2014 " + k.statistic + "'s kappa on claims " + f(k.claim_kappa) +
      " (" + k.claims + " claims), on answers " + f(k.answer_kappa) + " (" + k.answers + " answers)";
    $("disagreement-list").replaceChildren(...k.disagreements.map((d) => el("li", {},
      el("a", {href: "?adjudicate=1" + (params.get("reviewer") ? "&reviewer=" + encodeURIComponent(params.get("reviewer")) : "") + "#" + (d.position + 1)},
         "answer " + (d.position + 1) + ": " + d.case_id), ...d.what.map((w) => el("div", {}, w)))));
  }

  // ---- wiring ----------------------------------------------------------------------------------
  $("prev").onclick = () => go(-1);
  $("next").onclick = () => go(1);
  $("show-verdicts").onchange = renderVerdicts;
  $("abstention").onchange = (e) => { app.st.abstention = e.target.checked; changed(); };
  $("answerable").onchange = (e) => { app.st.answerable = e.target.checked; changed(); };
  $("passages").addEventListener("mouseup", () => setTimeout(onPassageSelect, 0));
  $("answer").addEventListener("mouseup", rememberCaret);
  const barHeight = () => document.documentElement.style.setProperty("--bar-h", $("bar").offsetHeight + "px");
  window.addEventListener("resize", barHeight);
  new ResizeObserver(barHeight).observe($("bar"));   // the bar wraps to two lines on a narrow window
  $("undo").onclick = undo;
  $("skip").onchange = toggleSkip;
  $("comment").addEventListener("change", setComment);
  $("disagreements-button").onclick = () => { $("disagreements").hidden = false; };
  $("close-disagreements").onclick = () => { $("disagreements").hidden = true; };
  document.addEventListener("keydown", (e) => {
    if (!app.st) return;
    if (e.target && e.target.id === "comment") {   // typing a comment: no shortcut but Escape (leave the box)
      if (e.key === "Escape") { e.target.blur(); e.preventDefault(); }
      return;
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "z") { undo(); e.preventDefault(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = app.session.keys, k = e.key;
    if (k === "S") { toggleSkip(); e.preventDefault(); return; }
    if (k === "u") { undo(); e.preventDefault(); return; }
    if (keys[k.toLowerCase()] && k.length === 1) { setLabel(keys[k.toLowerCase()]); e.preventDefault(); return; }
    const act = {j: () => activate(app.active + 1), ArrowDown: () => activate(app.active + 1),
                 k: () => activate(app.active - 1), ArrowUp: () => activate(app.active - 1),
                 x: split, m: merge, v: toggleVerdicts, Enter: () => go(1), ArrowRight: () => go(1), ArrowLeft: () => go(-1),
                 a: () => { app.st.abstention = !app.st.abstention; changed(); },
                 p: () => { app.st.answerable = !app.st.answerable; changed(); },
                 Backspace: () => { const c = app.st.claims[app.active]; if (c) { c.evidence = []; changed(); } }}[k];
    if (act) { act(); e.preventDefault(); }
  });
  start();
})();
