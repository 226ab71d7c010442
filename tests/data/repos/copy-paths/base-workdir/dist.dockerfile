FROM ghcr.io/searxng/base:searxng AS dist
COPY --chown=977:977 ./container/ ./
ENV GRANIAN_PORT=8080
ENTRYPOINT ["/usr/local/searxng/entrypoint.sh"]
