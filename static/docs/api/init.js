// Swagger UI for cfdi-extract. Everything is served by the binary: no remote resources.
(function () {
  if (window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches) {
    document.documentElement.classList.add("dark-mode");
  }
  window.ui = SwaggerUIBundle({
    url: "/docs/api/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: true,
    persistAuthorization: true,
    validatorUrl: null,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0
  });
})();
