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

# 1. Dependencies only (cached layer: only pyproject.toml changes rebuild it),
#    read from [project] dependencies; the project itself is installed in step 2.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# 2. The project: the one package `learnstream` (its schemas are package data).
COPY . .
RUN pip install --no-deps . \
    && rm -rf build dist

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
