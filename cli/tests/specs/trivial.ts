// The smallest useful spec: one extractor, one property, one generator. What a spec
// step costs when the spec itself does almost nothing (cli/benches/spec_replay.rs).
import { actions, always, extract, PressKey } from "@uatu/spec";

const route = extract((s) => s.snapshots.route as string | undefined, "route");

export const properties = {
  routeIsKnown: always(() => route.current !== "nowhere"),
};

export const actionsRoot = actions(() => PressKey({ key: "back" }), "back");
