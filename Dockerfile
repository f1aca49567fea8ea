# bulk-extract in a container: a build stage that runs the whole test suite, then a slim runtime
# with production dependencies only. docs/container.md shows how to build and run it;
# test/deploy/dockerfile.test.ts checks this file's structure and runs the runtime file set.

# Node 24 is an LTS line with support until April 2028 (Node 20 ended in April 2026, Node 22 ends in
# April 2027). The major is pinned, and is the same in both stages, so the tests run on the Node
# the image ships; a patch or Debian update comes with a rebuild. Debian 13 (trixie) is the
# current stable release.
FROM node:24-trixie AS build
WORKDIR /src
# Dependencies before the sources, so this layer stays cached while only the sources change.
<<<<<<< HEAD
# --ignore-scripts: `prepare` would run the build before the sources are here, and no package in
# the lockfile has an install script it needs (test/deploy checks that: the one there, protobufjs's
# under azurite, only prints a warning).
=======
# --ignore-scripts: `prepare` would run the build before the sources are here. The one package in
# the lockfile with an install script is `node`, the Node runtime that a clone runs its scripts and
# tests on (CONTRIBUTING.md); its script is what downloads that runtime, so here it is an empty
# package, and it is removed with any link to it: the tests run on this image's own Node, the one
# the runtime stage ships (test/deploy checks all of this).
>>>>>>> main
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/node node_modules/.bin/node
COPY . .
# The one gate, as in CI: lint, type-check, build (dist/) and every test. A failing test fails the
# build. The tests listen on 127.0.0.1 only and need no network.
RUN npm test

FROM node:24-trixie-slim AS runtime
# tini as PID 1 forwards SIGTERM and SIGINT to the CLI and reaps zombies. Node as PID 1 gets no
# default signal actions: `run` and `simulate` handle both signals themselves, but `demo`,
# `verify` and `status` would ignore `docker stop` until it kills them, and Ctrl-C would do nothing.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Production dependencies installed from the lockfile here, not pruned from the build stage: this
# layer depends on package.json and the lockfile only, so it stays cached when the sources change,
# and nothing of the build stage (devDependencies, caches) can come along. --ignore-scripts keeps
# `prepare` (tsc, a devDependency) from running; no production dependency has an install script.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force
# From the build stage, so the image holds exactly what the tests ran against; the stage with
# `npm test` is never skipped, since dist/ comes from it.
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
# `demo` reads its job from beside the program, wherever it runs.
COPY --from=build /src/config ./config

# The working directory is where runs write: output.dir and the checkpoint are relative to it, so
# the examples' `output.dir: ./out` lands in /data/out, the output volume, and the demo's
# ./demo-out in /data/demo-out, a volume of its own. config/ here holds the example jobs. /config
# is for the user's own job files, mounted read-only. The program in /app stays owned by root.
WORKDIR /data
COPY --from=build /src/config ./config
# Owned by the runtime user before VOLUME: a new named volume takes this ownership, and changes to
# a path after it is declared a volume would be discarded.
RUN mkdir /config /data/out /data/demo-out \
  && chown node:node /data /data/out /data/demo-out
VOLUME ["/config", "/data/out", "/data/demo-out"]
# One malloc arena: the export's peak memory stays flat over a long run (bin/allocator.js, which
# sets the same when it is not set; set it to another value to change it).
ENV MALLOC_ARENA_MAX=1
# `node` (uid 1000, gid 1000) comes with the official Node images.
USER node
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/bulk-extract.js"]
# With no arguments the image prints the CLI's usage; `demo`, `run --config ...` and the other
# commands go after the image name.
CMD ["--help"]
