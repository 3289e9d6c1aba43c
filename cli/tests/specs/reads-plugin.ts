// Reads the screen-signature extractor plugin's values like snapshots.
import { always, extract, taps, weighted, pressKey } from "@uatu/spec";

const signature = extract((s) => s.snapshots["screen-signature.signature"], "signature");
const distinct = extract((s) => s.snapshots["screen-signature.distinct_screens"], "distinctScreens");

export const properties = {
  signatureIsAString: always(() => typeof signature.current === "string" && signature.current.length > 0),
  distinctScreensNeverShrink: always(
    () => typeof distinct.current === "number" && (distinct.previous === undefined || distinct.current >= (distinct.previous as number)),
  ),
};

export const actionsRoot = weighted([5, taps], [1, pressKey]);
