"""`memoryx setup`: prepares what the first add would otherwise build in silence. The local encoder's ONNX
graph is exported from the bundled weights once per machine (tens of seconds, in a child process that
imports torch) into the shared cache (MEMORYX_EMBEDDING_CACHE_DIR), and its int8 copy, a new store's precision, is
quantised from it (seconds); every data directory then loads its encoder in well under a second. A bar with the elapsed time runs while it works; running it again only checks."""

from __future__ import annotations

import sys
import threading
import time

from memoryx.cli.inputs import EXIT_OK, EXIT_USAGE


def _with_bar(desc: str, work, enabled: bool):
    """Run `work()` while a tqdm bar shows `desc` and the elapsed time (refreshed twice a second)."""
    from tqdm import tqdm

    bar = tqdm(total=1, desc=desc, file=sys.stderr, disable=not enabled, leave=True,
               bar_format="{desc}: {bar} {elapsed}")
    done = threading.Event()

    def tick() -> None:
        while not done.wait(0.5):
            bar.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        result = work()
        bar.update(1)
        return result
    finally:
        done.set()
        ticker.join()
        bar.close()


def cmd_setup(args, _memory) -> int:
    from memoryx.models.embeddings import LocalMiniLMEmbeddings, make_embeddings
    from memoryx.settings import get_settings

    settings = get_settings()
    emb = make_embeddings(settings)
    if not isinstance(emb, LocalMiniLMEmbeddings):
        print(f"Embeddings come from {settings.embedding_model!r}: nothing to prepare locally.")
        return EXIT_OK
    started = time.monotonic()
    try:
        vector = _with_bar("Preparing the local encoder (built once per machine)",
                           lambda: emb.embed_query("MemoryX setup check"), enabled=not args.json)
    except Exception as exc:
        print(f"error: the local encoder could not be prepared: {exc}\nRe-run with -v for details, or set "
              "MEMORYX_EMBEDDING_RUNTIME=torch to use sentence-transformers directly.", file=sys.stderr)
        return EXIT_USAGE
    took = time.monotonic() - started
    if args.json:
        from memoryx.cli.render import print_json

        print_json({"encoder": emb.model_path, "runtime": emb.runtime, "precision": emb.precision, "dims": len(vector),
                    "cache_dir": str(emb.cache_dir), "seconds": round(took, 2)})
    else:
        print(f"Encoder ready: {emb.runtime} runtime, {emb.precision}, {len(vector)} dimensions, cached in {emb.cache_dir} "
              f"({took:.1f} s).")
    return EXIT_OK
