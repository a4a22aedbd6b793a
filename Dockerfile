FROM python:3.11-slim
# Production: DEBUG off (memoryweb's default too) and served over TLS (a proxy in front terminates
# it): HTTPS redirects, HSTS, cookies over TLS only. SECRET_KEY and ALLOWED_HOSTS come from the environment.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 DEBUG=false MEMORYWEB_HTTPS=true
WORKDIR /app
COPY pyproject.toml README.md ./
COPY memoryweb memoryweb
COPY accounts accounts
COPY memories memories
COPY retrieval retrieval
COPY templates templates
COPY static static
COPY manage.py ./
# torch first and pinned, so sentence-transformers does not pull another build
# (pass --build-arg TORCH_INDEX=<a CPU wheel index> for a much smaller image).
ARG TORCH_INDEX=""
RUN pip install --no-cache-dir torch==2.13.0 ${TORCH_INDEX:+--index-url $TORCH_INDEX} \
 && pip install --no-cache-dir -e .
EXPOSE 8000
CMD ["memoryweb", "serve", "--host", "0.0.0.0", "--port", "8000"]
