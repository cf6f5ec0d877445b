"""`memoryx profile --user-id U [--history]`: the user's profile (memoryx.knowledge.profiles)."""

from __future__ import annotations

from memoryx.cli.inputs import EXIT_OK, EXIT_USAGE
from memoryx.cli.render import print_json


def cmd_profile(args, m) -> int:
    if not args.user_id:
        print("memoryx profile: pass --user-id (whose profile to show).")
        return EXIT_USAGE
    profile = m.get_profile(user_id=args.user_id, include_history=args.history)
    if args.json:
        print_json(profile)
        return EXIT_OK
    from memoryx.knowledge.profiles import profile_lines  # lazily: it loads the models

    lines = profile_lines(profile)
    print(f"Profile of {args.user_id}" + ("" if lines else ": nothing known yet"))
    for line in lines:
        print("  " + line[2:])
    for old in profile.get("history") or []:
        print(f"  (was) {old['field']}: {old['value']} until {old['ended_at']}")
    return EXIT_OK
