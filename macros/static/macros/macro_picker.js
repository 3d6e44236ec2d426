// The ticket page's "Macro" select (macros/admin.py): picking one fills the reply and the "nota interna" box
// from the admin's preview (the agent may edit them) and lists the actions saving the page will apply.
// Text only (textContent): a macro's words are never read as HTML.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  const select = document.getElementById("id_macro");
  if (!select) {
    return;
  }
  const reply = document.getElementById("id_new_reply");
  const internal = document.getElementById("id_internal");
  const actions = document.createElement("div");
  actions.id = "macro-acoes";
  actions.className = "help";
  select.insertAdjacentElement("afterend", actions);

  function show(lines) {
    actions.replaceChildren();
    if (!lines.length) {
      return;
    }
    const title = document.createElement("p");
    title.textContent = "Ao salvar, a macro aplica:";
    const list = document.createElement("ul");
    for (const line of lines) {
      const item = document.createElement("li");
      item.textContent = line;
      list.appendChild(item);
    }
    actions.append(title, list);
  }

  select.addEventListener("change", async function () {
    show([]);
    if (!select.value) {
      return;
    }
    const chosen = select.value;
    let preview;
    try {
      const response = await fetch(select.dataset.previewUrl + chosen + "/", {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      if (!response.ok) {
        throw new Error(String(response.status));
      }
      preview = await response.json();
    } catch (error) {
      actions.textContent = "Não foi possível carregar a macro. Tente de novo.";
      return;
    }
    if (select.value !== chosen) {
      return; // another macro was picked meanwhile
    }
    reply.value = preview.mensagem;
    internal.checked = preview.interna;
    show(preview.acoes.length ? preview.acoes : ["Nenhuma mudança no ticket, só a mensagem."]);
  });
});
