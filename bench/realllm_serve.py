"""The real small LLM of ``../shared/realllm/setup.sh``, served with a cap on every reply's length.

    ~/.cache/realllm/venv/bin/python bench/realllm_serve.py MODEL.gguf PORT ALIAS [N_CTX] [N_PARALLEL] [N_PREDICT]
    # e.g. (after ``bash ../shared/realllm/setup.sh``; run it in the realllm venv, which has xllamacpp):
    cd ~/.cache/realllm && OMP_WAIT_POLICY=PASSIVE venv/bin/python /path/to/bench/realllm_serve.py \\
        models/qwen2.5-coder-1.5b-instruct.gguf 8081 qwen2.5-coder-1.5b-instruct 6144 4 1024

The same llama.cpp server as ``../shared/realllm/serve.py`` (xllamacpp, 127.0.0.1, temperature 0 unless a
request sets one), with one difference: ``N_PREDICT`` (default 1024) caps the tokens of every reply, as a
hosted API's output limit does; a reply cut there ends with ``finish_reason: "length"`` and the vendor's own
parsing decides what it makes of it. Why: Phoenix's and TruLens's requests set no output limit, and the
1.5B model sometimes never stops (it wrote 1,900-2,900 tokens in a slot until its 6,144-token context was
full, ~20 minutes per reply at ~2 tokens/s on 2 shared cores). The longest reply that did end in 412 recorded
ones was 396 tokens, so 1024 cuts only runaways. Imports nothing of the project. Runs until killed
(``kill -9``: like serve.py, it keeps serving after SIGTERM while a request is in flight).
"""
import os
import signal
import sys
import threading

import xllamacpp as xlc


def main(argv: list[str]) -> None:
    model, port, alias = argv[0], int(argv[1]), argv[2]
    n_ctx = int(argv[3]) if len(argv) > 3 else 8192
    n_par = int(argv[4]) if len(argv) > 4 else 1
    n_predict = int(argv[5]) if len(argv) > 5 else 1024
    p = xlc.CommonParams()
    p.model.path = model
    p.model_alias = {alias}
    p.hostnames = ["127.0.0.1"] if isinstance(p.hostnames, list) else p.hostnames
    p.port = port
    p.n_ctx = n_ctx * n_par   # total KV; each slot gets n_ctx
    p.n_parallel = n_par
    p.n_batch = p.n_ubatch = 512
    threads = int(os.environ.get("LLM_THREADS", "2"))
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
    p.cache_ram_mib = 1024
    p.endpoint_metrics = True
    p.n_predict = n_predict
    p.sampling.temp = 0.0   # default only; requests may override
    srv = xlc.Server(p)
    print("LISTENING", srv.listening_address, f"n_predict={n_predict}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    stop.wait()


if __name__ == "__main__":
    main(sys.argv[1:])
