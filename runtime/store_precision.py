"""The local encoder's precision as the store records it. Vectors from the fp32 and the int8 encoder sit at
cosine ~0.99 to each other, close enough that a mixed store would answer plausibly and rank slightly wrong
with no error anywhere; so the first process that opens a store records the precision its vectors are written
with, MEMORYX_EMBEDDING_PRECISION=auto (the default) follows the record, and a setting that contradicts it is
refused at open with the ways out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoryx.errors import InvalidInputError
from memoryx.models.embeddings import chosen_precision, has_precision

if TYPE_CHECKING:
    from memoryx.settings import Settings
    from memoryx.stores.sql import SQLStore

PRECISION_KEY = "embedding_precision"


def precision_for_store(settings: "Settings", sql: "SQLStore", given: str | None = None) -> str | None:
    """fp32 or int8: the precision the local encoder must run at for this store, recorded in a store that has
    none yet; None when the settings name no local encoder with a precision. MEMORYX_EMBEDDING_PRECISION=auto
    takes the recorded one; a store holding memories but no record was written by fp32, the only precision there
    was; a new store takes `chosen_precision`. Raises InvalidInputError when an explicit precision contradicts the
    record. `given`: the precision of an encoder the caller built (it wins over the settings, and is checked and
    recorded the same way). The settings object is left as it is: the caller's, maybe shared with other stores."""
    if not has_precision(settings) and given is None:
        return None
    recorded = sql.store_setting(PRECISION_KEY)
    asked = given or settings.embedding_precision
    who = f"the embeddings given run at {asked}" if given else f"MEMORYX_EMBEDDING_PRECISION={asked}"
    if asked == "auto":
        precision = recorded or ("fp32" if sql.holds_memories() else chosen_precision(settings))
    elif recorded is not None and recorded != asked:
        raise InvalidInputError(
            f"{who}, but the vectors of the store at {sql.safe_url} were written by the "
            f"{recorded} encoder, and queries must come from the encoder that wrote them. "
            + (f"Build the encoder with precision={recorded!r}" if given
               else f"Unset it (auto follows the store) or set {recorded}")
            + f"; to move the store to {asked}, `memoryx export` its scopes and "
            f"`memoryx import` them into a new MEMORYX_DATA_DIR with MEMORYX_EMBEDDING_PRECISION={asked}.")
    else:
        precision = asked
    if recorded is None:
        precision = sql.record_store_setting(PRECISION_KEY, precision)  # another process may have been first
    return precision
