// What the browser tests share: their settings from the environment, checks that fail the run,
// and Debian's Chromium launched headless with nothing that reaches the network by itself.
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

/** The environment variable `name`, which the Rust test must have set. */
export function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** Fails the run with `message` unless `condition` holds. */
export function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** The screenshots folder (SHOTS_DIR), created if missing. */
export function shotsDir() {
  const shots = env("SHOTS_DIR");
  mkdirSync(shots, { recursive: true });
  return shots;
}

/** Headless Chromium (CHROMIUM, or Debian's). */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
