// Inlined before case_browser.js only in the page of a large run: the cases the page carries with their scores
// only come column by column (harness.reports.model.case_index.Compact, about 80 bytes a case instead of 1.1 kB);
// this turns them back into the case objects the browser reads, in #cb-data, before it reads them.
"use strict";
(function () {
  const node = document.getElementById("cb-data");
  const data = JSON.parse(node.textContent);
  const x = data.more;
  if (!x) return;
  x.ids.forEach((id, i) => {
    const scores = x.cells[i].map((k) => x.kinds[k]);
    data.cases.push({id, pos: x.pos[i], tags: x.tag_lists[x.tags[i]], spread: x.spread[i], divergent: x.divergent[i] === 1,
                     scores, statuses: [...new Set(scores.map((s) => s.status))].sort(), question: null, answer: null,
                     contexts: [], rows: [], detail: false});
  });
  delete data.more;
  node.textContent = JSON.stringify(data);
})();
