// Starts Swagger UI on the API reference page (/docs); a file, not an inline script, so the
// page keeps the web app's content policy.
window.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("swagger-ui");
  // eslint-disable-next-line no-undef
  SwaggerUIBundle({
    url: root.dataset.specUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: false,
  });
});
