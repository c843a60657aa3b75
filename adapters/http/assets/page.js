// The answer page's live parts: stage progress from the job's event stream, then a reload
// that shows the rendered answer; the feedback buttons (the page's token rates its job; it
// does not retry or cancel it). Text from the server is set with textContent, never as HTML.
(function () {
  "use strict";
  var body = document.body;
  var job = body.dataset.job;
  var token = body.dataset.token;
  if (!job || !token) { return; }
  var query = "?token=" + encodeURIComponent(token);
  var notice = document.getElementById("notice");
  var names = {};
  var template = document.getElementById("stage-names");
  if (template) {
    template.content.querySelectorAll("span").forEach(function (span) {
      names[span.dataset.stage] = span.textContent;
    });
  }

  function say(text) { if (notice) { notice.textContent = text; } }

  function showStage(event) {
    var list = document.getElementById("stages");
    if (!list || !event.stage) { return; }
    var item = list.querySelector('li[data-stage="' + event.stage + '"]');
    if (!item) {
      item = document.createElement("li");
      item.dataset.stage = event.stage;
      var name = document.createElement("span");
      name.className = "name";
      name.textContent = names[event.stage] || event.stage;
      var message = document.createElement("span");
      message.className = "message";
      item.appendChild(name);
      item.appendChild(document.createTextNode(" "));
      item.appendChild(message);
      list.appendChild(item);
    }
    item.className = event.kind === "finished" ? "done" : "running";
    item.querySelector(".message").textContent = line(event);
  }

  // As adapters/chat/progress.py words it: the round of the tier's maximum, each source's
  // queries; otherwise the event's own message.
  function line(event) {
    var detail = event.detail || {};
    if (!detail.round) { return event.message || ""; }
    var of = "Round " + detail.round + "/" + detail.rounds_allowed;
    if (event.kind === "started" && event.stage === "search" && detail.queries && detail.queries.length) {
      var order = [], by = {};
      detail.queries.forEach(function (q) {
        if (!by[q.label]) { by[q.label] = []; order.push(q.label); }
        by[q.label].push("'" + q.query + "'");
      });
      return of + ": searching " + order.map(function (label) {
        return label + ": " + by[label].join(", ");
      }).join(" · ");
    }
    if (event.kind === "started" && event.stage === "rank" && detail.results !== null && detail.results !== undefined) {
      return of + ": processing " + detail.results + " results";
    }
    return event.message || "";
  }

  if (body.dataset.running === "yes" && window.EventSource) {
    var stream = new EventSource("/v1/jobs/" + encodeURIComponent(job) + "/events" + query);
    var status = document.getElementById("status");
    var bar = document.getElementById("progress-bar");
    stream.addEventListener("progress", function (message) {
      var event = JSON.parse(message.data);
      if (event.kind === "started" || event.kind === "finished") {
        showStage(event);
        if (status) { status.textContent = "Researching"; }
      } else if (status && event.message) {
        status.textContent = event.message;  // queued, taken up again, cancelling...
      }
      if (bar && event.progress) { bar.value = Math.round(event.progress * 100); }
    });
    stream.addEventListener("result", function () {
      stream.close();
      window.location.reload();
    });
  }

  function post(path, payload) {
    return fetch("/v1/jobs/" + encodeURIComponent(job) + path + query, {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(payload || {}), credentials: "same-origin"
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) {
          throw new Error(data && data.error ? data.error.message : "request failed");
        }
        return data;
      });
    });
  }

  document.querySelectorAll("button.rate").forEach(function (button) {
    button.addEventListener("click", function () {
      var comment = document.getElementById("comment");
      post("/feedback", {rating: button.dataset.rating, comment: comment ? comment.value : ""})
        .then(function () {
          document.querySelectorAll("button.rate").forEach(function (other) {
            other.setAttribute("aria-pressed", other === button ? "true" : "false");
          });
          say("Thanks: your rating was saved.");
        }).catch(function (error) { say(error.message); });
    });
  });
}());
