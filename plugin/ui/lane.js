// A DAG's runs on the timeline, read from its lane (GET /api/v1/page): the public plan's runs over
// the next 71 days as a few periodic segments of occurrences, not one entry per run. Plain
// arithmetic and no DOM, so tests/plugin/ui/test_ui_lanes.py runs these very functions in Chromium and
// compares what they give with the plan's upcoming(). Instants and durations are microseconds.
"use strict";

// Occurrence j (0 <= j < count) of a segment.
function segmentAt(segment, j) {
  const size = segment.offsets.length;
  return segment.first + Math.floor(j / size) * segment.period + segment.offsets[j % size];
}

// How many of a segment's occurrences lie before t.
function segmentBefore(segment, t) {
  if (!(t > segment.first)) return 0;
  if (t === Infinity) return segment.count;
  const size = segment.offsets.length;
  const cycles = Math.floor((t - segment.first) / segment.period);
  const rest = t - segment.first - cycles * segment.period;
  let low = 0;
  let high = size;
  while (low < high) { // the first offset at or after `rest`
    const middle = (low + high) >> 1;
    if (segment.offsets[middle] < rest) low = middle + 1; else high = middle;
  }
  return Math.min(segment.count, cycles * size + low);
}

// How many of the lane's occurrences lie in [from, to).
function laneCount(lane, from, to) {
  return lane.segments.reduce((n, segment) => n + segmentBefore(segment, to) - segmentBefore(segment, from), 0);
}

// The runs whose occurrence lies in [from, to), then the first one at or after `to` (its window can
// reach back into the range), at most `limit`: { occurrence, run_after, window_start, window_end }.
// A run starts `phase` after its occurrence; its window ends `delay` before it and starts `lookback`
// earlier, or at the previous occurrence (the lane's `before` for its first) minus `delay`.
function laneRuns(lane, from, to, limit = Infinity) {
  const runs = [];
  let previous = lane.before;
  for (const segment of lane.segments) {
    let j = segmentBefore(segment, from);
    if (j > 0) previous = segmentAt(segment, j - 1);
    for (; j < segment.count; j++) {
      const occurrence = segmentAt(segment, j);
      const start = lane.lookback === null ? previous : occurrence - lane.lookback;
      runs.push({ occurrence, run_after: occurrence + lane.phase, window_start: start - lane.delay,
        window_end: occurrence - lane.delay });
      previous = occurrence;
      if (occurrence >= to || runs.length >= limit) return runs;
    }
  }
  return runs;
}

// The spacing of the segment that holds most of [from, to), when its occurrences are evenly spaced.
function laneSpacing(lane, from, to) {
  let best = null;
  let most = 0;
  for (const segment of lane.segments) {
    const n = segmentBefore(segment, to) - segmentBefore(segment, from);
    if (n > most) { most = n; best = segment; }
  }
  if (!best || best.count < 2) return 0;
  const gap = best.period / best.offsets.length;
  return best.offsets.every((offset, i) => offset === i * gap) ? gap : 0;
}

// The last occurrence the lane holds (null: none).
function laneLast(lane) {
  const segments = lane.segments;
  return segments.length ? segmentAt(segments[segments.length - 1], segments[segments.length - 1].count - 1) : null;
}
