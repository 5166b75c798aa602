"""Short renderings of user-given values for refusals, safe for any value: the layers above use these.

The one definition is in the pure core (:mod:`tessera.timetables._time.excerpt`), which the
timetables' own refusals use too; this module is its public face, since nothing outside
``timetables/`` reaches into the core.
"""

from __future__ import annotations

from tessera.timetables._time.excerpt import LIMIT, clip, digits_of, excerpt, lone_surrogate, not_unicode

__all__ = ["LIMIT", "clip", "digits_of", "excerpt", "lone_surrogate", "not_unicode"]
