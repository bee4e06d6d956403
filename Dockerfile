# learnstream worker image.
#   docker build -t learnstream .
#   docker run --rm -e LEARNSTREAM_BROKER_URL=kafka://broker:9092 -p 6066:6066 learnstream
#   docker run --rm -e LEARNSTREAM_BROKER_URL=kafka://broker:9092 learnstream topics create
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# 1. Dependencies only (cached layer: only pyproject.toml changes rebuild it).
#    Empty stand-ins for the packages let `pip install .` resolve and install
#    every dependency; the project itself is reinstalled in step 2.
COPY pyproject.toml README.md ./
RUN mkdir -p streams agents \
    && touch streams/__init__.py agents/__init__.py \
    && pip install . \
    && pip uninstall -y learnstream \
    && rm -rf streams agents build *.egg-info

# 2. The project (packages `streams`, `agents`; schemas/ stays in /app/schemas).
COPY . .
RUN pip install --no-deps . \
    && rm -rf build *.egg-info

# Run as an unprivileged user; Faust's data dir (tables, offsets) lives in a
# directory it owns.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin learnstream \
    && mkdir -p /var/lib/learnstream \
    && chown learnstream:learnstream /var/lib/learnstream
ENV LEARNSTREAM_DATA_DIR=/var/lib/learnstream \
    LEARNSTREAM_WEB_HOST=0.0.0.0 \
    LEARNSTREAM_WEB_PORT=6066
USER learnstream

# Faust web server: GET /metrics (Prometheus) and the worker's HTTP views.
EXPOSE 6066

ENTRYPOINT ["learnstream"]
CMD ["worker"]
