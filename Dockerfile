# bfs as a container image: the package built and installed in a first stage, then only the
# installed package (no compiler, no dev dependencies) on the same base, run as a non-root user.
#
#   docker build -t bfs .
#   docker run -d --name bfs -p 6381:6381 -v bfs-data:/data bfs --requirepass secret
#
# BASE is any Debian-based image with node (24 or later) and npm under /usr/local: the official
# Node image by default; deploy/container/make-base.sh makes an equivalent one where registry
# images cannot be pulled. Arguments after the image name are bfs flags (they follow the config
# file, so they win); mount a file over /etc/bfs/bfs.conf to configure by file. deploy/README.md
# says more.
ARG BASE=node:24-bookworm-slim

FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json bfs.conf.example README.md ./
COPY src src
COPY docs docs
COPY deploy deploy
# The package as `npm pack` makes it, installed as `npm install -g` installs it, under /opt/bfs.
RUN npm run build \
 && npm pack --ignore-scripts --silent \
 && npm install --global --prefix /opt/bfs --omit=dev --no-audit --no-fund --loglevel=error ./bloom-filter-server-*.tgz

FROM ${BASE}
RUN groupadd --system bfs \
 && useradd --system --gid bfs --home-dir /data --no-create-home --shell /usr/sbin/nologin bfs \
 && mkdir -p /data /etc/bfs \
 && chown bfs:bfs /data
COPY --from=build /opt/bfs /opt/bfs
COPY deploy/container/bfs.conf /etc/bfs/bfs.conf
COPY deploy/container/healthcheck.cjs /opt/bfs/healthcheck.cjs
ENV PATH=/opt/bfs/bin:$PATH
USER bfs
WORKDIR /data
VOLUME /data
EXPOSE 6381
# PING over the loopback; -NOAUTH (a password is set) also proves the server answers.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 CMD ["node", "/opt/bfs/healthcheck.cjs"]
# node runs as PID 1: its SIGTERM handler makes the final save (docker stop's 10 s grace).
ENTRYPOINT ["bfs", "/etc/bfs/bfs.conf"]
CMD []
