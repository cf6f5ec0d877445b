"""Keyword-path tokenisers measured on their own: BM25 alone, in process, with each candidate tokeniser.

    nice -n 10 .venv/bin/python bench/recall/keyword_tokenizers.py [--only en|cjk|cost] [--candidates A,B]
    nice -n 10 .venv/bin/python bench/recall/keyword_tokenizers.py --through-api CANDIDATE --stores DIR [run.py args]

The keyword path is BM25 over sparse vectors that `memoryx.core.text.tokenize` makes on both sides; a tokeniser
change moves nothing else, so it is measured here alone, with the product's BM25 (document weights as
`core.text.sparse_vector` writes them, k1 1.2, b 0.3, average length 12; IDF ln(1 + (N-n+0.5)/(n+0.5)) as
Qdrant's IDF modifier computes it; each distinct query token weight 1), in process, no store:

* English: LoCoMo dev (frac@10, a document per turn "Speaker: text") and LongMemEval_S dev and validation (a
  document per turn; session recall_all@5 / recall_any@5, turn recall_all@5, as the data README defines them).
* Chinese and Japanese: the everyday lives (bench/recall/everyday.py reads them): BM25 over each life's
  statements, top-1 / top-3 by the question's language; lives written by the team are dev, blind ones validation.
* Cost: µs per sentence of each language, and a fresh process's import + first call (the CLI pays it).

"today" is `memoryx.core.text.tokenize` (hand-written English suffix stripping; CJK characters + pairs with hand
tables of stop characters and Japanese grammar pairs), built here from its own pieces so that each candidate
changes one language's part and nothing else; "+a/-b" counts the questions a candidate answers better / worse.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import runpy
import statistics
import subprocess
import sys
import threading
import time
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
K1, B, AVG = 1.2, 0.3, 12.0

# ------------------------------------------------------------------------- today's tokeniser, piece by piece

sys.path[:0] = [str(ROOT.parent), str(HERE)]
import everyday  # noqa: E402 - the harness's readers of the lives and the shared data, beside this script
import sets  # noqa: E402
from memoryx.core.text import (  # noqa: E402 - the repository's parent holds the package
    _TOKEN_RE, CJK_CLASS as _CJK, CJK_STOP_CHARS as _OLD_CJK_STOP, JA_GRAMMAR_PAIRS as _OLD_JA_PAIRS,
    STOP_WORDS as _STOP, _word_token as _word_old,
)

_OLD_HIRAGANA = re.compile("[\u3040-\u309f]")
_OLD_KATAKANA_RUN = re.compile("[\u30a0-\u30ff\u31f0-\u31ff]{2,}")


def _old_cjk(run: str, _text: str, tables: bool = True) -> list[str]:
    """A CJK run as `core.text.tokenize` cuts it; `tables=False`: without its hand tables (their ablation)."""
    out = []
    for i, ch in enumerate(run):
        if not (tables and ch in _OLD_CJK_STOP) and ch != "ー" and not (tables and _OLD_HIRAGANA.match(ch)):
            out.append(ch)
        if i + 1 < len(run) and not (tables and run[i: i + 2] in _OLD_JA_PAIRS):
            out.append(run[i: i + 2])
    if len(run) > 2:
        out.extend(k.group(0) for k in _OLD_KATAKANA_RUN.finditer(run) if len(k.group(0)) > 2)
    return out


# ------------------------------------------------------------------------------------------- the candidates

def _word_fn(kind: str) -> Callable[[str], str | None]:
    """One word's token: today's (stop words, then `core.text._keyword_stem`), or the same stop words with a
    Snowball stemmer (PyStemmer: "english" is Porter2) or a lemmatiser (simplemma) in place of the stemming."""
    if kind == "today":
        return _word_old
    if kind == "lemma":
        import simplemma
        norm = lambda w: simplemma.lemmatize(w, lang="en").lower()  # noqa: E731
    else:
        import Stemmer
        norm = Stemmer.Stemmer({"snowball": "english", "porter": "porter"}[kind]).stemWord

    def word_token(word: str) -> str | None:
        word = None if word in _STOP else norm(word.replace("’", "'"))
        return word if word and word not in _STOP else None
    return word_token


_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_WORDLIKE = re.compile(rf"[\w{_CJK}]")
# Unidic / Sudachi parts of speech that carry no topic: particles, auxiliaries, symbols, blanks (and, below,
# the verbs and adjectives that only carry grammar: する, いる, ある).
_JA_DROP = ("助詞", "助動詞", "補助記号", "記号", "空白")
# jieba's tags of punctuation, particles, prepositions, conjunctions, modal words and interjections
_ZH_GRAMMAR = ("x", "u", "p", "c", "y", "e", "o")
# jieba's search mode has no tags: its one-character function words, as the English stop words
_ZH_STOP = frozenset("的 了 是 在 和 与 及 或 也 就 都 而 着 过 吗 呢 吧 啊 呀 么 之 其 这 那 个 们 我 你 他 她 它".split())


def _ja_content(pos1: str, pos2: str) -> bool:
    return not (pos1 in _JA_DROP or (pos2 == "非自立可能" and pos1 in ("動詞", "形容詞")))


@lru_cache(maxsize=None)
def _analyser(kind: str) -> Callable[[str], list[tuple[str, str, bool]]]:
    """(surface, base form, content word?) of each word of a CJK run, by one analyser."""
    if kind == "jieba search":  # a compound and its parts (乌龙茶, 乌龙)
        import jieba
        jieba.setLogLevel(60)
        jieba.initialize()
        return lambda run: [(w, w, bool(_WORDLIKE.search(w)) and w not in _ZH_STOP) for w in jieba.lcut_for_search(run)]
    if kind == "rjieba":
        import rjieba
        return lambda run: [(w, w, bool(_WORDLIKE.search(w)) and not t.startswith(_ZH_GRAMMAR))
                            for w, t in rjieba.tag(run)]
    if kind == "fugashi":  # unidic-lite; the base form as written (住ん -> 住む)
        import fugashi
        tagger = fugashi.Tagger()
        return lambda run: [(w.surface, w.feature.orthBase if w.feature.orthBase not in (None, "*") else w.surface,
                             _ja_content(w.feature.pos1, w.feature.pos2)) for w in tagger(run)]
    if kind == "sudachi A":  # the small dictionary, shortest units, normalised forms
        from sudachipy import Dictionary, SplitMode
        dictionary, own = Dictionary(dict="small"), threading.local()  # a Tokenizer serves one thread at a time

        def sudachi(run: str) -> list[tuple[str, str, bool]]:
            own.tok = getattr(own, "tok", None) or dictionary.tokenizer()
            return [(m.surface(), m.normalized_form(), _ja_content(*m.part_of_speech()[:2]))
                    for m in own.tok.tokenize(run, SplitMode.A)]
        return sudachi
    raise ValueError(kind)


def _words(kind: str, chars: bool = False, pairs: bool = False) -> Callable[[str], list[str]]:
    """The analyser's content words (base forms); `chars`: inside each word of two characters or more its Han
    characters too, `pairs`: and its character pairs (a word shares characters with its compounds and other
    forms, 部署 / 署, 保育園 / 保育园, which a whole-word match misses in short texts)."""
    analyse = _analyser(kind)

    def tokens(run: str) -> list[str]:
        out = []
        for _, w, content in analyse(run):
            if content:
                out.append(w)
                if chars and len(w) > 1:
                    out.extend(ch for ch in w if _HAN.match(ch))
                if pairs and len(w) > 2:
                    out.extend(w[i: i + 2] for i in range(len(w) - 1))
        return out
    return tokens


def _masked(kind: str, words: bool = False) -> Callable[[str], list[str]]:
    """Characters and character pairs as today's tokeniser makes them, inside the stretches of content words
    only: the analyser's parts of speech in place of the hand tables. `words`: each content word of two
    characters or more as a token too."""
    analyse = _analyser(kind)

    def tokens(run: str) -> list[str]:
        out: list[str] = []
        seg = ""
        for w, _, content in analyse(run) + [("", "", False)]:
            if content:
                seg += w
                if words and len(w) > 1:
                    out.append(w)
                continue
            out += [c for c in seg if not _OLD_HIRAGANA.match(c) and c != "ー"]
            out += [seg[i: i + 2] for i in range(len(seg) - 1)]
            if not words:
                out += [k.group(0) for k in _OLD_KATAKANA_RUN.finditer(seg) if len(seg) > 2 and len(k.group(0)) > 2]
            seg = ""
        return out
    return tokens


def make(word: str = "today", zh: Callable | None = None, ja: Callable | None = None,
         tables: bool = True) -> Callable[[str], list[str]]:
    """A tokeniser: `word` for other scripts' letters, `zh` / `ja` for CJK runs (None: today's). A run with kana,
    or of Han in a text with kana, is Japanese; other Han runs are Chinese; Hangul is cut as today."""
    word_fn = lru_cache(maxsize=65536)(_word_fn(word))

    def tokenize(text: str) -> list[str]:
        if not text:
            return []
        text = unicodedata.normalize("NFKC", text).lower()
        japanese = bool(_KANA.search(text))
        out: list[str] = []
        for m in _TOKEN_RE.finditer(text):
            run = m.group("cjk")
            if run is not None:
                if _HANGUL.search(run):
                    out.extend(_old_cjk(run, text, tables))
                elif japanese or _KANA.search(run):
                    out.extend(ja(run) if ja else _old_cjk(run, text, tables))
                else:
                    out.extend(zh(run) if zh else _old_cjk(run, text, tables))
                continue
            if m.group("num") is not None:
                out.append(m.group("num").replace(",", ""))
                continue
            tok = word_fn(m.group("word"))
            if tok:
                out.append(tok)
        return out
    return tokenize


class BM25:
    """The product's BM25 over one corpus of token lists."""

    def __init__(self, docs: list[list[str]]):
        self.n = len(docs)
        self.weights: list[dict[str, float]] = []
        df: Counter = Counter()
        for toks in docs:
            tf = Counter(toks)
            norm = K1 * (1 - B + B * len(toks) / AVG)
            self.weights.append({t: c * (K1 + 1) / (c + norm) for t, c in tf.items()})
            df.update(tf.keys())
        self.idf = {t: math.log(1 + (self.n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def rank(self, query: list[str]) -> list[int]:
        q = {t: self.idf[t] for t in set(query) if t in self.idf}
        scores = [(sum(w.get(t, 0.0) * i for t, i in q.items()), -d) for d, w in enumerate(self.weights)]
        order = sorted(range(self.n), key=lambda d: scores[d], reverse=True)
        return [d for d in order if scores[d][0] > 0]


def locomo(tok: Callable[[str], list[str]]) -> list[float]:
    """Each question's fraction of its evidence turns in the top 10 (categories 1-4)."""
    items, questions = sets.locomo()
    out = []
    for group in dict.fromkeys(it["group_id"] for it in items):
        turns = [(it["metadata"]["dia_id"], it["messages"][0]["content"]) for it in items if it["group_id"] == group]
        bm = BM25([tok(text) for _, text in turns])
        out += [sets.frac([turns[d][0] for d in bm.rank(tok(q["query"]))], q["evidence"], 10)
                for q in questions if q["group_id"] == group]
    return out


def longmemeval(tok: Callable[[str], list[str]], questions: list[dict]) -> dict[str, list[bool]]:
    """Each question's session recall_all@5, session recall_any@5, turn recall_all@5 (the data README's
    definitions)."""
    rows = []
    for q in questions:
        docs = sets.lme_docs(q)
        ev_turns, ev_sessions = sets.lme_evidence(q)
        ranked = [docs[d][0] for d in BM25([tok(text) for _, text in docs]).rank(tok(q["question"]))]
        top_sessions = sets.sessions_of(ranked)[:5]
        rows.append((all(s in top_sessions for s in ev_sessions), any(s in top_sessions for s in ev_sessions),
                     all(t in ranked[:5] for t in ev_turns)))
    return {k: [r[i] for r in rows] for i, k in enumerate(("s_all5", "s_any5", "t_all5"))}


def everyday_lives(tok: Callable[[str], list[str]], blind: bool) -> dict[str, list[tuple[bool, bool]]]:
    """language -> each question's (top-1, top-3) over the lives of one side; the 'same script' rows keep the
    questions whose answer is written in the question's own script (what a keyword path can find at all)."""
    hits: dict[str, list[tuple[bool, bool]]] = {}
    for life in everyday.load_lives():
        if bool(life.get("blind")) != blind:
            continue
        texts = [st["text"] for st in life["statements"]]
        bm = BM25([tok(t) for t in texts])
        for q in life["questions"]:
            found = [everyday.holds(texts[d], q["expected"]) for d in bm.rank(tok(q["question"]))[:3]]
            row, lang = (bool(found[:1] and found[0]), any(found)), q["language"]
            hits.setdefault(lang, []).append(row)
            if (lang in ("zh", "ja")) == bool(re.search(f"[{_CJK}]", " ".join(q["expected"]))):
                hits.setdefault(f"{lang} same script", []).append(row)
    return dict(sorted(hits.items()))


SAMPLES = {"en": ["I ran the Leeds half marathon today, finished in 2 hours 5 minutes.",
                  "My daughter Maya just started school and she's loving the new teachers already."],
           "zh": ["我妹妹下个月结婚，我们全家都要去杭州参加婚礼。", "我最喜欢的茶是乌龙茶，每天早上都喝一杯。"],
           "ja": ["出町柳の近くで一人暮らししてる。鴨川まで歩いて3分なのが最高。", "週末は山登りをしています。"]}


def cost(toks: dict[str, Callable[[str], list[str]]], rounds: int = 5) -> dict[str, dict[str, float]]:
    """µs per sentence of each language for each tokeniser (distinct sentences: no cache answers), the best of
    `rounds` rounds that each time every tokeniser in turn (a load on the shared machine falls on all alike)."""
    out: dict[str, dict[str, float]] = {name: {} for name in toks}
    for lang, sents in SAMPLES.items():
        for r in range(rounds):
            for name, tok in toks.items():
                tok(sents[0])
                texts = [f"{s} {r}{i}" if lang == "en" else f"{s}{r}{i}" for i in range(300) for s in sents]
                t0 = time.perf_counter()
                _ = [tok(t) for t in texts]
                out[name][lang] = min(out[name].get(lang, math.inf), (time.perf_counter() - t0) / len(texts) * 1e6)
    return out


def first_call(spec: str) -> float:
    """Seconds a fresh process spends on candidate `spec`'s imports and first call (one sentence per language)."""
    code = (f"import sys, time; sys.path.insert(0, {str(HERE)!r}); import keyword_tokenizers as T; "
            f"t = time.perf_counter(); tok = T.CANDIDATES[{spec!r}](); [tok(s[0]) for s in T.SAMPLES.values()]; "
            "print(time.perf_counter() - t)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(res.stdout.strip().splitlines()[-1])


CANDIDATES: dict[str, Callable[[], Callable[[str], list[str]]]] = {
    "today": lambda: make(),
    "today without its CJK tables": lambda: make(tables=False),
    "en snowball": lambda: make(word="snowball"),
    "en porter": lambda: make(word="porter"),
    "en lemma (simplemma)": lambda: make(word="lemma"),
    "zh jieba search": lambda: make(zh=_words("jieba search")),
    "zh jieba search + chars": lambda: make(zh=_words("jieba search", chars=True)),
    "zh rjieba mask + words": lambda: make(zh=_masked("rjieba", words=True)),
    "ja fugashi": lambda: make(ja=_words("fugashi")),
    "ja fugashi + chars + pairs": lambda: make(ja=_words("fugashi", chars=True, pairs=True)),
    "ja fugashi mask": lambda: make(ja=_masked("fugashi")),
    "ja sudachi A": lambda: make(ja=_words("sudachi A")),
    "ja sudachi A mask": lambda: make(ja=_masked("sudachi A")),
    "cjk analysers": lambda: make(zh=_masked("rjieba", words=True), ja=_masked("sudachi A")),  # the two above
}
EN = ("today", "en snowball", "en porter", "en lemma (simplemma)")
CJK = tuple(c for c in CANDIDATES if not c.startswith("en "))


def _available(name: str) -> Callable[[str], list[str]] | None:
    try:
        return CANDIDATES[name]()
    except ImportError as exc:
        return print(f"({name}: not installed here, skipped: {exc})", file=sys.stderr)


def _vs(new: list, old: list) -> str:
    """Paired count against today's tokeniser: questions better / worse."""
    pairs = [(float(a), float(b)) for a, b in zip(new, old)]
    return f"+{sum(a > b for a, b in pairs)}/-{sum(a < b for a, b in pairs)}"


def compare(before: str, after: str) -> None:
    """Two run.py --json-out files of the lives (today's, a candidate's) by mode, side and question language."""
    rows = [{(r["qid"], r["infer"]): r for r in json.loads(Path(f).read_text())["rows"] if r["set"] == "lives"}
            for f in (before, after)]
    print("| lives, Memory.search | side | language | n | top-1 today → candidate | top-3 today → candidate | +/- |")
    print("|---|---|---|---|---|---|---|")  # +/-: questions better / worse at top-1
    for infer, blind, lang in sorted({(r["infer"], r["blind"], r["language"]) for r in rows[0].values()},
                                     key=lambda k: (not k[0], k[1], k[2])):
        keys = [k for k, r in rows[0].items() if (r["infer"], r["blind"], r["language"]) == (infer, blind, lang)]
        a, b = ([rs[k]["memoryx"] for k in keys] for rs in rows)
        m = {x: [statistics.mean(r[x] for r in a), statistics.mean(r[x] for r in b)] for x in ("top1", "top3")}
        print(f"| {'extraction on' if infer else 'as said'} | {'validation (blind)' if blind else 'dev'} | {lang} "
              f"| {len(keys)} | {m['top1'][0]:.3f} → {m['top1'][1]:.3f} | {m['top3'][0]:.3f} → {m['top3'][1]:.3f} "
              f"| {_vs([r['top1'] for r in b], [r['top1'] for r in a])} |")


_BY_NAME = ("api.memory", "nodes.extract_facts", "nodes.retrieve_similar", "nodes.analyze_query", "search.relations",
            "search.relation_terms", "search.current", "search.time_words", "models.offline",
            "knowledge.episode_memories", "lifecycle.causal")  # the modules that import tokenize by name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("en", "cjk", "cost"))
    ap.add_argument("--candidates", default="", help="comma-separated candidate names (default: all; 'today' is "
                    "always measured first, as the reference of the +better/-worse counts)")
    ap.add_argument("--through-api", metavar="CANDIDATE", help="run bench/recall/run.py, given the arguments left "
                    "over, with CANDIDATE as memoryx.core.text.tokenize (give it its own --stores: keyword vectors "
                    "are made at ingest)")
    ap.add_argument("--compare", nargs=2, metavar=("TODAY_JSON", "CANDIDATE_JSON"),
                    help="the lives of two run.py --json-out files, side by side")
    ap.add_argument("--keyword-only", action="store_true", help="with --through-api: the candidate makes the keyword "
                    "vectors only; the modules comparing texts by their tokens keep today's")
    args, rest = ap.parse_known_args(argv)
    if args.compare:
        compare(*args.compare)
        return 0
    if args.through_api:
        if os.environ.get("PYTHONHASHSEED") != "0":  # run.py would start itself again, without the candidate
            os.environ["PYTHONHASHSEED"] = "0"
            os.execv(sys.executable, [sys.executable, *sys.argv])
        import memoryx.core.text as text  # nothing that imports tokenize by name is loaded yet
        for name in _BY_NAME if args.keyword_only else ():  # they keep today's; the keyword vectors get the candidate
            importlib.import_module(f"memoryx.{name}")
        text.tokenize = CANDIDATES[args.through_api]()
        sys.argv = [str(HERE / "run.py"), *rest]
        runpy.run_path(str(HERE / "run.py"), run_name="__main__")
        return 0
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    chosen = [c for c in args.candidates.split(",") if c]
    print(f"# keyword-path tokenisers, BM25 alone ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n")
    if args.only in (None, "en"):
        dev, val = sets.read_lme("lme-dev"), sets.read_lme("lme-val")
        print("| English tokeniser | LoCoMo dev frac@10 | LME dev s_all@5 / s_any@5 / t_all@5 "
              "| LME val s_all@5 / s_any@5 / t_all@5 | s |")
        print("|---|---|---|---|---|")
        ref = None
        for name in ["today"] + [c for c in (chosen or EN) if c != "today"]:
            tok = _available(name)
            if tok is None:
                continue
            t0, tok = time.perf_counter(), lru_cache(maxsize=None)(tok)  # haystacks share their sessions
            res = (locomo(tok), longmemeval(tok, dev), longmemeval(tok, val))
            ref = ref or res
            lo = f"{statistics.mean(res[0]):.3f}" + ("" if res is ref else f" ({_vs(res[0], ref[0])})")
            cells = [" / ".join(f"{statistics.mean(r[k]):.3f}" for k in ("s_all5", "s_any5", "t_all5"))
                     + ("" if res is ref else " (" + ", ".join(_vs(r[k], o[k]) for k in ("s_all5", "t_all5")) + ")")
                     for r, o in ((res[1], ref[1]), (res[2], ref[2]))]
            print(f"| {name} | {lo} | {cells[0]} | {cells[1]} | {time.perf_counter() - t0:.0f} |", flush=True)
        print(f"(LongMemEval: {len(dev)} dev, {len(val)} validation questions; (+a/-b): questions better / worse "
              "than today's, LoCoMo by evidence fraction, LongMemEval by session and turn recall_all@5)\n")
    if args.only in (None, "cjk"):
        langs = ("zh", "zh same script", "ja", "ja same script", "en")
        print("| tokeniser | side | " + " | ".join(langs) + " |")
        print("|---|---|" + "---|" * len(langs))
        refs: dict[bool, dict] = {}
        for name in ["today"] + [c for c in (chosen or CJK) if c != "today"]:
            tok = _available(name)
            if tok is None:
                continue
            for blind in (False, True):
                r = everyday_lives(tok, blind)
                ref = refs.setdefault(blind, r)
                cells = []
                for k in langs:
                    if k not in r:
                        cells.append("-")
                        continue
                    top1, top3 = (statistics.mean(x[i] for x in r[k]) for i in (0, 1))
                    vs = "" if r is ref else f" {_vs([x[0] for x in r[k]], [x[0] for x in ref[k]])}"
                    cells.append(f"{top1:.2f} / {top3:.2f} ({len(r[k])}){vs}")
                side = "validation (blind)" if blind else "dev"
                print(f"| {name} | {side} | " + " | ".join(cells) + " |", flush=True)
        print("(top-1 / top-3 (questions) +better/-worse at top-1 than today's, by the question's language; dev: the "
              "lives written by the team, validation: the lives written blind)\n")
    if args.only in (None, "cost"):
        print("| tokeniser | en µs/sentence | zh µs/sentence | ja µs/sentence | analyser import + first call s |")
        print("|---|---|---|---|---|")
        toks = {name: tok for name in (chosen or CANDIDATES) if (tok := _available(name)) is not None}
        for name, c in cost(toks).items():
            print(f"| {name} | {c['en']:.1f} | {c['zh']:.1f} | {c['ja']:.1f} | {first_call(name):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
