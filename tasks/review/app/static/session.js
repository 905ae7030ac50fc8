// Signing in and out: the token goes to POST /api/signin as JSON, which sets an http-only
// cookie (the token is never put in the address); signing out clears it.
(function () {
  "use strict";
  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      credentials: "same-origin",
    });
    let result = {};
    try { result = await response.json(); } catch (error) { result = { error: response.statusText }; }
    return { ok: response.ok, result };
  }
  const signin = document.getElementById("signin");
  if (signin) {
    signin.addEventListener("submit", async (event) => {
      event.preventDefault();
      const message = signin.querySelector(".message");
      message.textContent = "signing in...";
      const { ok, result } = await post("/api/signin", { token: signin.token.value });
      if (ok) { window.location.assign("/"); return; }
      message.textContent = result.error || "could not sign in";
    });
  }
  const signout = document.getElementById("signout");
  if (signout) {
    signout.addEventListener("submit", async (event) => {
      event.preventDefault();
      await post("/api/signout", {});
      window.location.assign("/signin");
    });
  }
})();
