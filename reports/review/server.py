"""The review app's HTTP server (aiohttp, loopback only): the page, its script and style (package data
under ``static/``), and a small JSON API over one labels file.

API (``reviewer`` is a query parameter on every call; the command line's ``--reviewer`` is the default):

- ``GET /api/session``: the sample's size, the reviewer's progress (answers done, answers skipped), the key map,
  the other reviewers, the labelling guidelines kept in the labels file (``{"file", "text", "set_at"}`` or null);
- with ``--assign``, the session also gives the reviewer's ``assigned`` positions (null: the whole sample) and the
  ``team``'s progress, one ``{"reviewer", "assigned", "done", "skipped"}`` per assigned reviewer;
- ``GET /api/answer/{pos}``: the answer at ``pos`` (question, passages, answer), the reviewer's latest labels
  (or the starting claims), what the run's metrics said (the page hides it until asked), and, with
  ``adjudicate=1``, every other reviewer's labels;
- a save with ``adjudicate=1`` by a reviewer who never labelled that answer, on an answer two others finished,
  records the reviewer as an adjudicator in the labels file (not a rater: see :mod:`.reviewers`);
- ``PUT /api/answer/{pos}``: save the reviewer's labels of that answer (checked first; 400 with the field
  otherwise; the state may carry the reviewer's ``comment`` and ``skipped``); the save is on disk when the reply
  comes. Every save is an append, so an undo in the page is one more save of the earlier state;
- ``GET /api/disagreements``: the reviewers' kappa and the answers to adjudicate.

A request from another site cannot save: saves need ``Content-Type: application/json`` (a cross-site page
must ask first, and nothing answers its preflight), and a ``Host`` other than the loopback address is
refused (DNS rebinding).
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
from dataclasses import asdict

from harness.reports.review import answers as A
from harness.reports.review import assign as S
from harness.reports.review import reviewers as R
from harness.reports.review.store import LabelStore

from aiohttp import web

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
HOST = "127.0.0.1"
NAME = re.compile(r"[\w .@-]{1,64}")
"""A reviewer's name (matched whole, after :func:`reviewer_name` trims the ends)."""
KEYS = {"1": "supported", "s": "supported", "2": "inference", "i": "inference", "3": "not_found",
        "n": "not_found", "4": "contradicted", "c": "contradicted"}
"""Keyboard shortcut -> claim label (the page shows this map)."""
TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}


def make_app(store: LabelStore, reviewer: str) -> web.Application:
    """The app over ``store``; ``reviewer`` names whoever does not say otherwise in the URL."""
    app = web.Application(middlewares=[_loopback_only], client_max_size=4 * 1024 * 1024)
    app["store"], app["reviewer"] = store, reviewer
    app.router.add_get("/", _page)
    app.router.add_get("/static/{name}", _static)
    app.router.add_get("/api/session", _session)
    app.router.add_get("/api/answer/{pos:\\d+}", _answer)
    app.router.add_put("/api/answer/{pos:\\d+}", _save)
    app.router.add_get("/api/disagreements", _disagreements)
    return app


@web.middleware
async def _loopback_only(request, handler):
    host = (request.host or "").rsplit(":", 1)[0].strip("[]")
    if host not in (HOST, "localhost", "::1"):
        return web.json_response({"error": f"host {request.host!r} refused: the review app answers on {HOST} only"},
                                 status=403)
    return await handler(request)


def reviewer_name(raw: str | None) -> str:
    """A reviewer's name with the white space at its ends trimmed (``"alice\\n"`` is alice, not a second
    reviewer); ValueError for anything else that is not 1-64 letters, digits, spaces or ``. @ - _``.

    >>> reviewer_name("alice\\n"), reviewer_name(" bob ")
    ('alice', 'bob')
    """
    name = (raw or "").strip()
    if not NAME.fullmatch(name):
        raise ValueError(f"{raw!r}: expected 1-64 letters, digits, spaces or . @ - _")
    return name


def _reviewer(request) -> str:
    try:
        return reviewer_name(request.query.get("reviewer") or request.app["reviewer"])
    except ValueError as e:
        raise web.HTTPBadRequest(text=json.dumps({"error": f"reviewer {e}"}), content_type="application/json") from None


async def _page(request):
    return web.FileResponse(os.path.join(STATIC, "review.html"), headers={"Cache-Control": "no-store"})


async def _static(request):
    name = request.match_info["name"]
    path = os.path.join(STATIC, name)
    if os.path.dirname(os.path.abspath(path)) != STATIC or not os.path.isfile(path):
        raise web.HTTPNotFound()
    with open(path, "rb") as fh:
        body = fh.read()
    return web.Response(body=body, content_type=TYPES.get(os.path.splitext(name)[1], "application/octet-stream"),
                        headers={"Cache-Control": "no-store"})


def _states(store: LabelStore, reviewer: str) -> list[dict]:
    """The reviewer's latest states of their answers (the assigned ones when answers are assigned to them)."""
    mine = store.latest(reviewer).get(reviewer, {})
    assigned = ((store.meta().get("assignment") or {}).get("positions") or {}).get(reviewer)
    if assigned is None:
        return list(mine.values())
    picks = store.picks()
    return [mine.get(picks[p].case_id) for p in assigned if p < len(picks)]


def _progress(store: LabelStore, reviewer: str) -> int:
    return sum(A.answer_done(s) for s in _states(store, reviewer))


def _skipped(store: LabelStore, reviewer: str) -> int:
    return sum(A.skipped(s) for s in _states(store, reviewer))


async def _session(request):
    store, who = request.app["store"], _reviewer(request)
    picks = store.picks()
    mine = store.latest(who).get(who, {})
    meta = store.meta()
    assignment = meta.pop("assignment", None)
    assigned = ((assignment or {}).get("positions") or {}).get(who)
    mine_positions = assigned if assigned is not None else list(range(len(picks)))
    first_open = next((i for i in mine_positions if i < len(picks) and not A.answer_done(mine.get(picks[i].case_id))
                       and not A.skipped(mine.get(picks[i].case_id))), mine_positions[0] if mine_positions else 0)
    team = S.progress(assignment, store.latest(), [p.case_id for p in picks], A.answer_done, A.skipped)
    return web.json_response({"reviewer": who, "total": len(picks), "done": _progress(store, who),
                              "skipped": _skipped(store, who), "guidelines": meta.pop("guidelines", None),
                              "first_open": first_open, "meta": meta, "keys": KEYS,
                              "assigned": assigned, "team": team,
                              "reviewers": store.reviewers(),
                              "done_positions": [i for i, p in enumerate(picks) if A.answer_done(mine.get(p.case_id))]})


def _pick(request):
    store = request.app["store"]
    picks = store.picks()
    pos = int(request.match_info["pos"])
    if pos >= len(picks):
        raise web.HTTPNotFound(text=json.dumps({"error": f"no answer {pos}; the sample has {len(picks)}"}),
                               content_type="application/json")
    return store, picks, pos, picks[pos]


async def _answer(request):
    store, picks, pos, pick = _pick(request)
    who = _reviewer(request)
    case = store.case_json(pick.case_id)
    latest = store.latest()
    state = latest.get(who, {}).get(pick.case_id)
    body = {"pos": pos, "total": len(picks), "case_id": pick.case_id, "probability": pick.probability,
            "case": {k: case[k] for k in ("id", "question", "contexts", "answer")},
            "state": state or A.initial_state(case), "saved_at": (state or {}).get("saved_at"),
            "verdicts": store.verdicts(pick.case_id)}
    if request.query.get("adjudicate"):
        body["others"] = {r: s[pick.case_id] for r, s in latest.items() if r != who and pick.case_id in s}
    return web.json_response(body)


async def _save(request):
    store, picks, pos, pick = _pick(request)
    who = _reviewer(request)
    if request.content_type != "application/json":
        raise web.HTTPUnsupportedMediaType(text=json.dumps({"error": "a save is JSON (Content-Type: application/json)"}),
                                           content_type="application/json")
    raw = await request.read()
    try:
        body = json.loads(raw.decode("utf-8"))
    except RecursionError:
        return web.json_response({"error": "the save is not usable JSON: nested too deeply"}, status=400)
    except json.JSONDecodeError as e:
        return web.json_response({"error": f"the save is not JSON: {e}"}, status=400)
    except UnicodeDecodeError as e:
        return web.json_response({"error": f"the save is not JSON: {e}"}, status=400)
    except ValueError as e:   # an integer past Python's digit limit
        return web.json_response({"error": f"the save is not usable JSON: {str(e).split(';')[0]}"}, status=400)
    try:
        state = A.check(store.case_json(pick.case_id), body)
    except RecursionError:
        return web.json_response({"error": "the save is not usable JSON: nested too deeply"}, status=400)
    except (ValueError, KeyError, TypeError) as e:
        return web.json_response({"error": " ".join(str(e).split())}, status=400)
    try:
        if request.query.get("adjudicate") and _third_party(store, who, pick.case_id):
            store.add_adjudicator(who)   # settling others' labels on an answer they never labelled: not a rater
        at = store.save(who, pick.case_id, state)
    except sqlite3.Error as e:   # a file that cannot be written: say so, never "saved"
        return web.json_response({"error": f"the labels file {store.path} cannot be written ({e})"}, status=503)
    return web.json_response({"saved_at": at, "done": A.answer_done(state), "progress": _progress(store, who),
                              "skipped": _skipped(store, who)})


def _third_party(store: LabelStore, who: str, case_id: str) -> bool:
    """Is ``who`` saving, in adjudication mode, an answer two or more other reviewers finished and ``who`` never
    labelled? Then ``who`` is adjudicating (a reviewer who follows a disagreement link to mend their own labels
    has labelled the answer before, and stays a rater)."""
    latest = store.latest()
    if case_id in latest.get(who, {}):
        return False
    return sum(A.answer_done(s.get(case_id)) for r, s in latest.items() if r != who) >= 2


async def _disagreements(request):
    store = request.app["store"]
    picks = store.picks()
    order = [p.case_id for p in picks]
    texts = {cid: store.case_json(cid)["answer"] for cid in order}
    k = R.compare(order, texts, store.latest(), adjudicators=store.adjudicators())
    return web.json_response(asdict(k))


async def serve(store: LabelStore, reviewer: str, port: int, ready=print) -> None:
    """Serve until cancelled; ``ready(url)`` once the socket listens (``port`` 0: any free port)."""
    runner = web.AppRunner(make_app(store, reviewer), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, port)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]
    ready(f"http://{HOST}:{bound}/")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
